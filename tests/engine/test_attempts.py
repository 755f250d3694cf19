"""Illegal placements a player might make: the engine calls each one illegal, and finding one
leaves the game as it was."""

import random

import pytest

from engine import GAMES, ILLEGAL, Event, Observation, new_game
from engine.attempts import illegal_attempt


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("moves", [0, 4, 8])
def test_an_attempt_is_a_legal_moves_pieces_on_cells_the_rules_forbid(name, moves):
    game = new_game(name)
    rng = random.Random(moves)
    for _ in range(moves):
        action = game.random_move(rng)
        if isinstance(action, Event):
            game.handle(action)
        else:
            game.play(action)
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
