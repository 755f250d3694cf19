"""Blokus Duo records in Pentobi's SGF dialect: written, read back, and Pentobi's own files read."""

from pathlib import Path

import pytest

from engine import FormatError
from engine.grid import parse_square
from firmware.sgf import from_sgf, parse, to_sgf
from tests.firmware.games import random_game

BOOK = Path(__file__).parent / "data" / "pentobi-duo-book.blksgf"


def _turned(square: str) -> str:
    col, row = parse_square(square)
    return f"{'abcdefghijklmn'[13 - col]}{14 - row}"


@pytest.mark.parametrize("seed,first", [(0, "orange"), (1, "violet"), (2, "orange"), (5, "violet")])
def test_a_finished_game_reads_back_square_for_square(seed, first):
    game = random_game("blokus-duo", seed, first=first)
    text = to_sgf(game)
    back = from_sgf(text)
    assert back.players == game.players
    assert back.scores == game.scores and back.winner == game.winner
    turned = "GC[" in text
    view = game.view()
    expected = {(_turned(s) if turned else s): c for s, c in view.items()}
    assert back.view() == expected
    pieces = [str(m).split("@")[0] for m in game.history]
    assert [str(m).split("@")[0] for m in back.history] == pieces


def test_the_first_colour_starts_on_e10_as_pentobi_wants():
    for seed in range(6):
        sgf = parse(to_sgf(random_game("blokus-duo", seed, actions=2)))
        colour, squares = sgf.moves[0]
        assert colour == "B" and "e10" in squares
        assert sgf.root["GM"] == ["Blokus Duo"]


def test_moves_are_written_in_pentobis_square_order():
    for _, squares in parse(to_sgf(random_game("blokus-duo", 3))).moves:
        keys = [(parse_square(s)[1], parse_square(s)[0]) for s in squares]
        assert keys == sorted(keys)


def test_pentobis_own_opening_book_reads_along_its_main_line():
    game = from_sgf(BOOK.read_text(encoding="utf-8"))
    assert [str(m) for m in game.history] == [
        "X5@f11,e10,f10,g10,f9",
        "X5@i6,h5,i5,j5,i4",
        "F5@h9,i9,g8,h8,h7",
        "F5@e7,e6,f6,g6,f5",
    ]


@pytest.mark.parametrize(
    "text,reason",
    [
        ("(;GM[Blokus]PB[x];B[a1])", "not a Blokus Duo SGF"),
        ("(;GM[Blokus Duo];B[e10,e11,e13])", "no Blokus Duo piece"),
        ("(;GM[Blokus Duo];B[z99])", "not a Blokus Duo square"),
        ("(;GM[Blokus Duo];W[j5])", "orange was to move"),
        ("(;GM[Blokus Duo];B[a1])", "first piece must cover"),
        ("(;GM[Blokus Duo];B[e10", "not closed"),
        ("GM[Blokus Duo]", "before the first node"),
    ],
)
def test_bad_sgf_is_refused_with_the_reason(text, reason):
    with pytest.raises(FormatError, match=reason):
        from_sgf(text)


def test_other_games_have_no_sgf():
    with pytest.raises(FormatError, match="txt or jsonl"):
        to_sgf(random_game("blokus", 1, actions=2))
