"""Square boards (Blokus, Gobblet): cell ``a1`` bottom left, file letters and rank numbers round."""

from __future__ import annotations

from engine.grid import FILES

from .shapes import Drawing

CELL = 28.0
MARGIN = 18.0


def board(cols: int, rows: int, title: str, cell: float = CELL) -> Drawing:
    """An empty drawing sized for the board, with its coordinates written round it."""
    d = Drawing(cols * cell + 2 * MARGIN, rows * cell + 2 * MARGIN, title)
    for c in range(cols):
        x = MARGIN + (c + 0.5) * cell
        d.label((x, MARGIN / 2), FILES[c], 9, "#555555")
        d.label((x, MARGIN + rows * cell + MARGIN / 2), FILES[c], 9, "#555555")
    for r in range(rows):
        y = MARGIN + (rows - r - 0.5) * cell
        d.label((MARGIN / 2, y), str(r + 1), 9, "#555555")
        d.label((MARGIN + cols * cell + MARGIN / 2, y), str(r + 1), 9, "#555555")
    return d


def origin(col: int, row: int, rows: int, cell: float = CELL) -> tuple[float, float]:
    """The top-left corner of square (``col``, ``row``), ``row`` 0 being the bottom rank."""
    return MARGIN + col * cell, MARGIN + (rows - 1 - row) * cell
