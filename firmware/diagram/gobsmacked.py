"""Gobsmacked!: the holes where the data file puts them; circles, squares and the jokers."""

from __future__ import annotations

from engine import Game
from engine.data import load

from . import GRID
from .shapes import Drawing

HOLE = 48.0
MARGIN = 10.0
FILL = {"black": "#2b2b2b", "white": "#f7f4ea"}


def draw(game: Game) -> Drawing:
    """Each hole as a square well; a token drawn in its colour and shape; a shape joker as a
    grey token with both outlines, a colour joker as a half-black, half-white disc."""
    box = game.box  # type: ignore[attr-defined]
    holes = {str(k): (int(c), int(r)) for k, (c, r) in _holes(game).items()}
    cols = max(c for c, _ in holes.values()) + 1
    rows = max(r for _, r in holes.values()) + 1
    d = Drawing(
        cols * HOLE + 2 * MARGIN,
        rows * HOLE + 2 * MARGIN,
        f"gobsmacked: {len(game.history)} actions",
    )
    for name, content in game.view().items():
        col, row = holes[name]
        x, y = MARGIN + col * HOLE, MARGIN + (rows - 1 - row) * HOLE
        well = "#cfe3cf" if name in box.opening else "#e4e0d6"
        d.rect(
            x + 2, y + 2, HOLE - 4, HOLE - 4, well, cell=name, content=content or "empty", **GRID
        )
        d.label((x + 9, y + 9), name, 7, "#7a7a7a")
        if content is not None:
            _token(d, box.by_name[content], (x + HOLE / 2, y + HOLE / 2 + 2))
    return d


def _holes(game: Game) -> dict[str, list[int]]:
    return load("gobsmacked", game.options.get("data"))["holes"]


def _token(d: Drawing, kind: object, centre: tuple[float, float]) -> None:
    colours, shapes = sorted(kind.colours), sorted(kind.shapes)  # type: ignore[attr-defined]
    x, y = centre
    r = HOLE * 0.3
    if len(colours) == 1 and len(shapes) == 1:
        fill = FILL[colours[0]]
        if shapes[0] == "circle":
            d.circle(centre, r, fill, stroke="#555555", width=1.2)
        else:
            d.rect(x - r, y - r, 2 * r, 2 * r, fill, stroke="#555555", width=1.2)
        return
    if len(colours) > 1:  # colour joker: its shape, half black and half white
        d.circle(centre, r, FILL["white"], stroke="#555555", width=1.2)
        d.polygon(_half_disc(centre, r), FILL["black"])
        d.label(centre, "C", 12, "#d62828")
        return
    d.rect(x - r, y - r, 2 * r, 2 * r, "#b8b8b8", stroke="#555555", width=1.2)  # shape joker
    d.circle(centre, r, "#9a9a9a", stroke="#555555", width=1.2)
    d.label(centre, "S", 12, "#ffffff")


def _half_disc(centre: tuple[float, float], r: float, steps: int = 16) -> list[tuple[float, float]]:
    from math import cos, pi, sin

    x, y = centre
    return [
        (x + r * cos(pi / 2 + pi * k / steps), y - r * sin(pi / 2 + pi * k / steps))
        for k in range(steps + 1)
    ]
