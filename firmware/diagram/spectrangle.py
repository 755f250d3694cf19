"""Spectrangle: the triangle of triangles, each piece split in three towards its coloured edges."""

from __future__ import annotations

from math import sqrt

from engine import Game

from . import GRID
from .shapes import Drawing, Point

SIDE = 60.0
MARGIN = 10.0
COLOURS = {
    "R": "#d93a3a",
    "G": "#3a9a4a",
    "B": "#2f6fd0",
    "Y": "#f2c230",
    "P": "#8a4fb8",
    "W": "#ffffff",
}


def corners(row: int, k: int, rows: int) -> tuple[Point, Point, Point]:
    """The (left, right, base) edges' end points as three corners. For an up triangle
    (even ``k``): apex, bottom left, bottom right; down: top left, top right, bottom."""
    h = SIDE * sqrt(3) / 2
    x0 = MARGIN + rows * SIDE / 2 - row * SIDE / 2 + (k // 2) * SIDE
    y0, y1 = MARGIN + row * h, MARGIN + (row + 1) * h
    if k % 2 == 0:
        return (x0, y0), (x0 - SIDE / 2, y1), (x0 + SIDE / 2, y1)
    return (x0, y0), (x0 + SIDE, y0), (x0 + SIDE / 2, y1)


def edges(row: int, k: int, rows: int) -> tuple[tuple[Point, Point], ...]:
    """The cell's (left, right, base) edges as point pairs."""
    a, b, c = corners(row, k, rows)
    if k % 2 == 0:  # apex a: left a-b, right a-c, base b-c
        return (a, b), (a, c), (b, c)
    return (a, c), (b, c), (a, b)  # down: left top-left-bottom, right top-right-bottom, base top


def draw(game: Game) -> Drawing:
    """Empty cells grey with their bonus; a piece as three wedges from its centre, each in the
    colour of its edge, with its left-right-base letters."""
    box = game.box  # type: ignore[attr-defined]
    rows = round(sqrt(box.size))
    h = SIDE * sqrt(3) / 2
    d = Drawing(
        rows * SIDE + 2 * MARGIN, rows * h + 2 * MARGIN, f"spectrangle: {len(game.history)} actions"
    )
    view = game.view()
    for row in range(rows):
        for k in range(2 * row + 1):
            name = str(row * row + k)
            tri = corners(row, k, rows)
            centre = (sum(p[0] for p in tri) / 3, sum(p[1] for p in tri) / 3)
            piece = view[name]
            content = "".join(piece) if piece else "empty"
            d.polygon(tri, "#ece8df", cell=name, content=content)
            if piece is None:
                bonus = box.bonus.get(int(name))
                d.label(
                    centre,
                    f"x{bonus}" if bonus else name,
                    9 if bonus else 7,
                    "#b03030" if bonus else "#8a8a8a",
                )
            else:
                for colour, (p, q) in zip(piece, edges(row, k, rows), strict=True):
                    d.polygon((centre, p, q), COLOURS[colour], stroke="#555555", width=0.4)
            d.polygon(tri, None, **GRID)
    return d
