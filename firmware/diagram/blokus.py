"""Blokus and Blokus Duo: coloured squares, the start points marked with a dot."""

from __future__ import annotations

from engine import Game
from engine.grid import parse_square

from . import GRID, grid
from .shapes import Drawing

COLOURS = {"orange": "#f28c28", "violet": "#7b4fa0", None: "#f1efe9"}


def draw(game: Game) -> Drawing:
    """Every square in its player's colour; start points still free show a dot."""
    size = game.edition.size  # type: ignore[attr-defined]
    d = grid.board(size, size, f"{game.name}: {len(game.history)} actions")
    starts = set(game.edition.names(game.edition.start))  # type: ignore[attr-defined]
    s = grid.CELL
    for name, content in game.view().items():
        col, row = parse_square(name)
        x, y = grid.origin(col, row, size)
        d.rect(x, y, s, s, COLOURS[content], cell=name, content=content or "empty", **GRID)
        if name in starts and content is None:
            d.circle((x + s / 2, y + s / 2), s / 6, "#9a9a9a")
    return d
