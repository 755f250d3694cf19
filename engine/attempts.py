"""Illegal placements a player might make: a legal move's pieces put down on the wrong cells.

Used to script the simulated game night (:mod:`firmware.scenario`) and to film illegal
placements for the vision's fits and benchmarks (:func:`vision.bench_table.filmed_game`).
"""

from __future__ import annotations

import random
from typing import Any

from .core import ILLEGAL, FormatError, Game, Observation
from .grid import parse_square, square_name

#: Legal moves tried (shuffled) before giving up on a position.
MOVES_TRIED = 40


def _view_after(game: Game, action: Any) -> dict[str, Any]:
    game.play(action)
    view = game.view()
    game.undo()
    return view


def _shifted(cells: dict[str, Any], dx: int, dy: int, names: set[str]) -> dict[str, Any] | None:
    out = {}
    for name, content in cells.items():
        try:
            col, row = parse_square(name)
            moved = square_name(col + dx, row + dy) if col + dx >= 0 and row + dy >= 0 else ""
        except (FormatError, IndexError):
            return None
        if moved not in names:
            return None
        out[moved] = content
    return out


def illegal_attempt(game: Game, rng: random.Random) -> tuple[dict[str, Any], str] | None:
    """A board showing one placement the rules forbid, made by moving a legal move's pieces to
    other cells: empty ones, else occupied ones the pieces can cover (:meth:`Game.can_cover`: a
    Gobblet piece from the reserve gobbling a smaller one); ``None`` when no such board is
    found. Returns (board view, the engine's reason)."""
    for covering in (False, True):
        found = _illegal_attempt(game, rng, covering)
        if found is not None:
            return found
    return None


def _illegal_attempt(
    game: Game, rng: random.Random, covering: bool
) -> tuple[dict[str, Any], str] | None:
    before = game.view()
    names = set(before)
    moves = list(game.legal_moves())
    rng.shuffle(moves)
    for move in moves[:MOVES_TRIED]:
        after = _view_after(game, move)
        placed = {n: c for n, c in after.items() if c != before[n] and c is not None}
        if len(placed) != sum(1 for n in after if after[n] != before[n]):
            continue  # a move that also uncovers or empties a cell: keep it simple
        targets: list[dict[str, Any]] = []
        if len(placed) == 1:
            (content,) = placed.values()
            targets = [{n: content} for n in sorted(names) if before[n] is None or covering]
        else:
            offsets = [(dx, dy) for dx in range(-4, 5) for dy in range(-4, 5) if dx or dy]
            targets = [t for dx, dy in offsets if (t := _shifted(placed, dx, dy, names))]
        rng.shuffle(targets)
        for target in targets:
            if any(before[n] is not None for n in target) != covering:
                continue
            fits = (before[n] is None or game.can_cover(before[n], c) for n, c in target.items())
            if not all(fits):
                continue  # a piece cannot be put there so that only it shows
            view = dict(before)
            view.update(target)
            verdict = game.infer(Observation(game.name, view))
            if verdict.kind == ILLEGAL:
                return view, verdict.reason
    return None
