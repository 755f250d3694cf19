"""Illegal placements a player might make: a legal move's pieces put down on the wrong cells.

Used to script the simulated game night (:mod:`firmware.scenario`), to film illegal placements
for the vision's fits and benchmarks (:func:`vision.bench_table.filmed_game`), and by the vision
decoder to weigh what the players may have done against the legal moves (:func:`placements`,
and :func:`takebacks`: an earlier move's pieces lifted off again).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection, Hashable, Iterable, Mapping
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


def _group(changes: Mapping[str, Any]) -> Hashable | None:
    """What ``changes`` put down, wherever it is: the pieces by offset from their lowest square
    (a lone piece: its content); ``None`` when they lie on cells that are no grid squares."""
    if len(changes) == 1:
        return next(iter(changes.values()))
    try:
        squares = {parse_square(name): content for name, content in changes.items()}
    except FormatError:
        return None
    x0, y0 = min(squares)
    return tuple(sorted(((x - x0, y - y0), content) for (x, y), content in squares.items()))


def _recoloured(game: Game, changes: dict[str, Any], contents: Collection[Any]) -> list[dict]:
    """``changes``, and the same cells in each of ``contents`` another player owns when they
    all show one content of the player to move (pieces put down out of turn)."""
    kinds = set(changes.values())
    if len(kinds) != 1 or game.owner(next(iter(kinds))) != game.to_move:
        return [changes]
    others = [c for c in contents if game.owner(c) not in (None, game.to_move)]
    return [changes] + [dict.fromkeys(changes, other) for other in others]


def placements(
    game: Game,
    cells: Collection[str],
    legal: Iterable[Mapping[str, Any]],
    contents: Collection[Any] = (),
) -> list[dict[str, Any]]:
    """Every way one placement may change the board on ``cells`` only: the pieces of one of
    the ``legal`` changes (:meth:`Game.changes_after` of each legal move; those that uncover or
    empty a cell make none) put down as a group anywhere on ``cells``, each on an empty cell or
    over a piece it can cover (:meth:`Game.can_cover`), and the same pieces in the colour of
    another player, from ``contents`` (out of turn). The legal changes are among them."""
    groups: dict[Hashable, dict[str, Any]] = {}
    for changes in legal:
        if changes and all(content is not None for content in changes.values()):
            for group in _recoloured(game, dict(changes), contents):
                key = _group(group)
                if key is not None:
                    groups.setdefault(key, group)
    within = set(cells)
    squares: dict[tuple[int, int], str] = {}
    for name in within:
        try:
            squares[parse_square(name)] = name
        except FormatError:
            continue
    view = game.view()
    found: dict[frozenset[tuple[str, Any]], dict[str, Any]] = {}
    for key, group in groups.items():
        if len(group) == 1:
            (content,) = group.values()
            targets: Iterable[dict[str, Any] | None] = ({n: content} for n in within)
        else:
            targets = (_laid(key, x, y, squares) for x, y in squares)
        for target in targets:
            if target is not None and all(
                view[n] is None or game.can_cover(view[n], c) for n, c in target.items()
            ):
                found.setdefault(frozenset(target.items()), target)
    return list(found.values())


def takebacks(game: Game, cells: Collection[str]) -> list[dict[str, Any]]:
    """Every way taking one earlier action back by hand may change the board on ``cells`` only:
    the cells it changed, while they still show what it made, back to what they showed before
    it (a piece knocked off the board or lifted again)."""
    views = game.views()
    now, within = views[-1], set(cells)
    out = []
    for before, after in itertools.pairwise(views):
        changed = [n for n in after if after[n] != before[n]]
        if changed and within.issuperset(changed) and all(now[n] == after[n] for n in changed):
            out.append({n: before[n] for n in changed})
    return out


def _laid(group: Any, x: int, y: int, squares: dict[tuple[int, int], str]) -> dict[str, Any] | None:
    """``group`` (:func:`_group`) with its lowest square at (``x``, ``y``), when every piece
    lands on one of ``squares`` (position -> name); else ``None``."""
    cells = {}
    for (dx, dy), content in group:
        name = squares.get((x + dx, y + dy))
        if name is None:
            return None
        cells[name] = content
    return cells


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
