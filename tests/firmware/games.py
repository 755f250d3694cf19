"""Seeded random games of every kind, played to the end or for a number of actions."""

import random

from engine import Event, Game, new_game

OPTIONS = {"spectrangle": {"players": 3}}


def random_game(name: str, seed: int = 1, actions: int | None = None, **options) -> Game:
    """A game of ``name`` played by seeded random moves (to the end when ``actions`` is None)."""
    game = new_game(name, **{**OPTIONS.get(name, {}), **options})
    rng = random.Random(seed)
    while not game.is_over and (actions is None or len(game.history) < actions):
        action = game.random_move(rng)
        if isinstance(action, Event):
            game.handle(action)
        else:
            game.play(action)
    return game
