"""Illegal placements a player might make: a legal move's pieces put down on the wrong cells.

Used to script the simulated game night (:mod:`firmware.scenario`), to film illegal placements
for the vision's fits and benchmarks (:func:`vision.bench_table.filmed_game`), and by the vision
decoder to weigh what the players may have done against the legal moves (:func:`placements`).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from .core import ILLEGAL, FormatError, Game, Observation
from .grid import FILES, parse_square, square_name

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


Shape = tuple[tuple[tuple[int, int], Any], ...]
"""A group of pieces by their offsets from the group's first square, as :func:`_shape` gives it."""


def _shape(changes: Mapping[str, Any]) -> Shape | None:
    """The pieces of ``changes`` by offset from their lowest square (a lone piece: offset
    (0, 0), on any cell); ``None`` when they lie on cells that are no grid squares."""
    if len(changes) == 1:
        return (((0, 0), next(iter(changes.values()))),)
    try:
        squares = {name: parse_square(name) for name in changes}
    except FormatError:
        return None
    x0, y0 = min(squares.values())
    return tuple(sorted(((x - x0, y - y0), changes[n]) for n, (x, y) in squares.items()))


def _recoloured(game: Game, shape: Shape, contents: Collection[Any]) -> list[Shape]:
    """``shape``, and the same group in each of ``contents`` another player owns when its
    pieces are all one content of the player to move (a piece put down out of turn)."""
    kinds = {content for _, content in shape}
    if len(kinds) != 1 or game.owner(next(iter(kinds))) != game.to_move:
        return [shape]
    others = [c for c in contents if game.owner(c) not in (None, game.to_move)]
    return [shape] + [tuple((at, other) for at, _ in shape) for other in others]


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
    view = game.view()
    within = set(cells)
    shapes: set[Shape] = set()
    for changes in legal:
        if changes and all(content is not None for content in changes.values()):
            shape = _shape(changes)
            if shape is not None:
                shapes.update(_recoloured(game, shape, contents))
    squares: dict[str, tuple[int, int]] = {}
    for name in within:
        try:
            squares[name] = parse_square(name)
        except FormatError:
            continue
    found: dict[frozenset[tuple[str, Any]], dict[str, Any]] = {}
    for shape in shapes:
        anchors = within if len(shape) == 1 else squares
        for anchor in anchors:
            target = _put(game, view, shape, anchor, squares, within)
            if target is not None:
                found.setdefault(frozenset(target.items()), target)
    return list(found.values())


def _put(
    game: Game,
    view: Mapping[str, Any],
    shape: Shape,
    anchor: str,
    squares: Mapping[str, tuple[int, int]],
    within: Collection[str],
) -> dict[str, Any] | None:
    """``shape`` with its first piece (offset (0, 0)) on ``anchor``, when every piece lands on
    a cell of ``within`` where it fits; else ``None``."""
    if len(shape) == 1:
        cells = {anchor: shape[0][1]}
    else:
        x, y = squares[anchor]
        cells = {}
        for (dx, dy), content in shape:
            col, row = x + dx, y + dy
            name = square_name(col, row) if 0 <= col < len(FILES) and row >= 0 else ""
            if name not in within:
                return None
            cells[name] = content
    for name, content in cells.items():
        under = view.get(name)
        if under is not None and not game.can_cover(under, content):
            return None
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
