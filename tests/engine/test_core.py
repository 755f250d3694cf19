"""The shared vocabulary: events, square names and the game registry."""

import pytest

from engine import Event, FormatError, game_class, new_game
from engine.grid import parse_square, square_name, square_names


def test_event_round_trip_keeps_player_and_data():
    obj = {"event": "end", "player": "p2", "remaining": {"p1": ["RRY"]}}
    event = Event.from_json(obj)
    assert event.name == "end" and event.player == "p2"
    assert event.to_json() == obj


def test_unknown_event_is_a_format_error():
    with pytest.raises(FormatError, match="unknown event"):
        Event.from_json({"event": "shuffle"})


def test_square_names_round_trip():
    assert square_name(0, 0) == "a1"
    assert parse_square("l12") == (11, 11)
    names = square_names(12, 12)
    assert len(names) == 144 and names[0] == "a1" and names[-1] == "l12"
    assert all(square_name(*parse_square(n)) == n for n in names)


@pytest.mark.parametrize("bad", ["", "1a", "a", "A1", "aa"])
def test_bad_square_name_is_rejected(bad):
    with pytest.raises(FormatError):
        parse_square(bad)


def test_unknown_game_names_the_known_ones():
    with pytest.raises(FormatError, match="known games: gobsmacked"):
        game_class("chess")


@pytest.mark.parametrize("name", ["blokus-duo", "gobsmacked", "spectrangle"])
def test_is_legal_agrees_with_the_legal_moves(name):
    game = new_game(name)
    move = next(iter(game.legal_moves()))
    assert game.is_legal(move)
    game.play(move)
    assert not game.is_legal(move)  # the same piece, or the same cell, again
