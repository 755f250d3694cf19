"""Random positions that look like games in progress (not necessarily legal, but of pieces the
box has), for corpora, and random legal games move by move, as one table sees them
(:func:`random_game`)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np

from engine import Event, data, new_game
from engine.blokus import edition
from engine.core import RefereeError
from engine.gobblet import load_layout

from ..geometry import load_geometry
from .pieces import SPECTRANGLE_LETTERS

#: turns (moves, passes, exchanges) after which a sample game stops
MAX_TURNS = 400


def random_position(game: str, rng: np.random.Generator) -> dict[str, Any]:
    """An observation-style ``cells`` dict (every cell; ``None`` empty) for ``game``."""
    names = load_geometry(game).cell_names
    fill = float(rng.uniform(0.0, 0.75))
    if game == "gobblet":
        box = _gobblet_box()
        return {n: _gobblet_top(rng, box) if rng.random() < fill else None for n in names}
    if game in ("blokus", "blokus-duo"):
        return _blokus(game, names, fill, rng)
    if game == "spectrangle":
        return _spectrangle(names, fill, rng)
    if game == "gobsmacked":
        kinds = sorted(load_geometry(game).pieces["motif"]["kinds"])
        return {
            n: kinds[int(rng.integers(len(kinds)))] if rng.random() < fill else None for n in names
        }
    raise ValueError(f"no random positions for {game!r}")


def random_game(game: str, seed: int, moves: int | None = None) -> list[dict[str, Any]]:
    """The boards of a random legal game of ``game`` from ``seed``, move by move: the empty
    board first, then the board after each move (at most ``moves``), as observation-style
    ``cells`` dicts. Passes and exchanges change no cell and give no board; the game stops
    when it is over or the player to move is stuck."""
    rng = random.Random(seed)
    play = new_game(game)
    boards = [{n: play.cell_to_json(c) for n, c in play.view().items()}]
    for _ in range(MAX_TURNS):
        if play.is_over or (moves is not None and len(boards) > moves):
            break
        try:
            action = play.random_move(rng)
            if isinstance(action, Event):
                play.handle(action)  # a pass or an exchange: the board stays as it is
                continue
        except RefereeError:  # a stuck player ends the sample game
            break
        play.play(action)
        boards.append({n: play.cell_to_json(c) for n, c in play.view().items()})
    return boards


def _gobblet_box() -> Counter:
    """The pieces of a Gobblet box, (colour, size): count (``stacks`` of each)."""
    layout = load_layout()
    return Counter(
        {(c, s): layout.stacks for c in ("white", "black") for s in range(1, layout.sizes + 1)}
    )


def _gobblet_top(rng: np.random.Generator, box: Counter) -> dict[str, Any]:
    """A piece of ``box`` (taken out of it) on top of a square: a drawn colour and size or,
    when the box has no such piece left, the nearest size of that colour it has (the larger
    of two as near), else of the other colour. No draw more: a board the box could always
    give is the one drawn before the box was counted."""
    color = "white" if rng.random() < 0.5 else "black"
    size = int(rng.integers(1, 5))
    other = "black" if color == "white" else "white"
    for c, s in sorted(
        (key for key in box if key[0] in (color, other)),
        key=lambda cs: (cs[0] != color, abs(cs[1] - size), -cs[1]),
    ):
        if box[(c, s)]:
            box[(c, s)] -= 1
            return {"color": c, "size": s}
    raise ValueError("the box is empty")


def _blokus(
    game: str, names: tuple[str, ...], fill: float, rng: np.random.Generator
) -> dict[str, Any]:
    """Grow polyomino-like blobs of one colour from random seeds until ``fill`` is reached,
    each colour on no more squares than its pieces have (a square of a colour whose squares are
    all down takes the other colour: no draw more)."""
    cells: dict[str, Any] = dict.fromkeys(names)
    files = sorted({n[0] for n in names})
    ranks = len(names) // len(files)
    left = dict.fromkeys(("orange", "violet"), edition(game).total_squares)
    target = min(int(fill * 0.8 * len(names)), sum(left.values()))
    placed = 0
    while placed < target:
        color = "orange" if rng.random() < 0.5 else "violet"
        f, r = int(rng.integers(len(files))), int(rng.integers(ranks))
        for _ in range(int(rng.integers(1, 6))):
            name = f"{files[f]}{r + 1}"
            if cells[name] is None and any(left.values()):
                color = color if left[color] else ("violet" if color == "orange" else "orange")
                cells[name] = color
                left[color] -= 1
                placed += 1
            df, dr = ((1, 0), (-1, 0), (0, 1), (0, -1))[int(rng.integers(4))]
            f, r = min(max(f + df, 0), len(files) - 1), min(max(r + dr, 0), ranks - 1)
    return cells


def _spectrangle(names: tuple[str, ...], fill: float, rng: np.random.Generator) -> dict[str, Any]:
    """Distinct pieces of the real set, each in a random rotation (or flipped: double-sided)."""
    by_letter = {v: k for k, v in SPECTRANGLE_LETTERS.items()}
    codes = list(data.load("spectrangle")["pieces"])
    order = rng.permutation(len(codes))
    cells: dict[str, Any] = dict.fromkeys(names)
    for i, name in enumerate(names):
        if rng.random() < fill:
            colors = [by_letter[c] for c in codes[order[i]]]
            turn = rng.permutation(3)
            cells[name] = dict(
                zip(("left", "right", "base"), (colors[j] for j in turn), strict=True)
            )
    return cells
