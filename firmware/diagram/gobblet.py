"""Gobblet: each square's visible top piece, big to small, and the pieces it covers beneath."""

from __future__ import annotations

from engine import Game
from engine.grid import parse_square

from . import GRID, grid
from .shapes import Drawing

FILL = {"white": "#f7f4ea", "black": "#2b2b2b"}
INK = {"white": "#2b2b2b", "black": "#f7f4ea"}
CELL = 64.0


def draw(game: Game) -> Drawing:
    """The top piece as a disc sized by its size (its number on it); a row of small discs
    along the square's foot shows the covered pieces, bottom first."""
    layout = game.layout  # type: ignore[attr-defined]
    n, sizes = layout.side, layout.sizes
    d = grid.board(n, n, f"gobblet: {len(game.history)} actions", CELL)
    for name in layout.cells:
        col, row = parse_square(name)
        x, y = grid.origin(col, row, n, CELL)
        stack = game.stack(name)  # type: ignore[attr-defined]
        top = stack[-1] if stack else None
        shade = "#d9c7a3" if (col + row) % 2 else "#e8dcc0"
        content = "empty" if top is None else f"{top.color} {top.size}"
        d.rect(x, y, CELL, CELL, shade, cell=name, content=content, **GRID)
        if top is None:
            continue
        centre = (x + CELL / 2, y + CELL * 0.44)
        r = CELL * (0.14 + 0.24 * top.size / sizes)
        d.circle(centre, r, FILL[top.color], stroke="#555555", width=1.2)
        d.label(centre, str(top.size), 11 + 2 * top.size, INK[top.color])
        for i, piece in enumerate(stack[:-1]):
            pip = (x + 8 + i * 12, y + CELL - 7)
            d.circle(pip, 2 + piece.size, FILL[piece.color], stroke="#555555", width=0.8)
    return d
