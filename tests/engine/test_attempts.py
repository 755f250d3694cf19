"""Illegal placements a player might make: the engine calls each one illegal, and finding one
leaves the game as it was."""

import random

import pytest

from engine import AMBIGUOUS, GAMES, ILLEGAL, Event, Observation, new_game
from engine.attempts import illegal_attempt, placements, takebacks
from engine.grid import parse_square


def _after(name, moves):
    """A game of ``name`` after ``moves`` random actions (seeded by ``moves``), and its rng."""
    game = new_game(name)
    rng = random.Random(moves)
    for _ in range(moves):
        action = game.random_move(rng)
        game.handle(action) if isinstance(action, Event) else game.play(action)
    return game, rng


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("moves", [0, 4, 8])
def test_an_attempt_is_a_legal_moves_pieces_on_cells_the_rules_forbid(name, moves):
    game, rng = _after(name, moves)
    before = dict(game.view())
    record = game.to_record()
    found = illegal_attempt(game, rng)
    if found is None:  # only a Gobblet board whose pieces no piece in reserve fits over
        assert name == "gobblet"
        reserve = max(game.external_stacks(game.to_move))
        assert all(c is None or c.size >= reserve for c in before.values())
        return
    view, reason = found
    assert game.view() == before and game.to_record() == record  # nothing was played
    changed = {n for n in view if view[n] != before[n]}
    assert changed and all(view[n] is not None for n in changed)  # pieces put down, none lifted
    verdict = game.infer(Observation(name, view))
    assert verdict.kind == ILLEGAL and verdict.reason == reason


def _group(changes):
    """The pieces of ``changes`` by offset from their lowest square (one piece: anywhere)."""
    if len(changes) == 1:
        return tuple(changes.values())
    at = {parse_square(n): c for n, c in changes.items()}
    x0, y0 = min(at)
    return tuple(sorted(((x - x0, y - y0), c) for (x, y), c in at.items()))


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("moves", [0, 5])
def test_placements_put_a_legal_moves_pieces_on_the_given_cells_where_they_fit(name, moves):
    game, _ = _after(name, moves)
    view = game.view()
    legal = [game.changes_after(m) for m in game.legal_moves()]
    cells = sorted(view)[::2]  # every other cell
    found = placements(game, cells, legal)
    assert found
    groups = {_group(ch) for ch in legal if None not in ch.values()}
    for changes in found:
        assert set(changes) <= set(cells)
        assert all(view[n] is None or game.can_cover(view[n], c) for n, c in changes.items())
        assert _group(changes) in groups  # a legal move's group of pieces, moved
    # the legal changes that put pieces down on those cells only are among them
    within = [ch for ch in legal if set(ch) <= set(cells) and None not in ch.values()]
    assert all(ch in found for ch in within)


@pytest.mark.parametrize("name", ["blokus", "blokus-duo", "gobblet"])
def test_placements_in_another_players_colour_are_pieces_put_down_out_of_turn(name):
    game, _ = _after(name, 4)
    legal = [game.changes_after(m) for m in game.legal_moves()]
    cells = [n for n, c in game.view().items() if c is None]
    other = next(p for p in game.players if p != game.to_move)
    theirs = {c for ch in legal for c in ch.values()}
    theirs = {c._replace(color=other) if hasattr(c, "_replace") else other for c in theirs}
    own = placements(game, cells, legal)
    both = placements(game, cells, legal, contents=theirs)
    assert all(game.owner(c) == game.to_move for ch in own for c in ch.values())
    out_of_turn = [ch for ch in both if ch not in own]
    assert out_of_turn and all(game.owner(c) == other for ch in out_of_turn for c in ch.values())
    # each one is flagged: it is not the mover's piece
    for changes in out_of_turn[:20]:
        board = {**game.view(), **changes}
        assert game.infer(Observation(name, board)).kind == ILLEGAL


@pytest.mark.parametrize("name", sorted(GAMES))
def test_takebacks_lift_an_earlier_moves_pieces_while_they_still_show(name):
    game, _ = _after(name, 6)
    views = game.views()
    assert len(views) == len(game.history) + 1 and views[-1] == game.view()
    record = game.to_record()
    found = takebacks(game, list(game.view()))
    assert game.to_record() == record  # nothing was played or undone
    # the last move taken back: the board as it was before it
    assert {**views[-1], **found[-1]} == views[-2]
    # the referee never takes one for a move: it says the board is wrong ("check the board")
    legal = [game.changes_after(m) for m in game.legal_moves()]
    for changes in found:
        board = {**game.view(), **changes}
        assert changes in legal or game.infer(Observation(name, board)).kind in (ILLEGAL, AMBIGUOUS)
    # only within the given cells
    assert takebacks(game, []) == []
