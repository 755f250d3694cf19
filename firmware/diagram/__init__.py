"""Diagrams of positions: one drawing module per game, shared by the web page and
``referee diagram`` (:func:`draw` picks the module; :mod:`.shapes` writes SVG or PNG)."""

from __future__ import annotations

from collections.abc import Collection
from importlib import import_module

from engine import Game

from .shapes import Drawing

#: game name -> drawing module (each has ``draw(game, highlight, last) -> Drawing``).
MODULES = {
    "gobsmacked": "gobsmacked",
    "spectrangle": "spectrangle",
    "gobblet": "gobblet",
    "blokus": "blokus",
    "blokus-duo": "blokus",
}

#: Outline of the cells to fix (an illegal placement) and of the last move's cells.
ILLEGAL = "#d62828"
LAST = "#1d70b8"


def draw(game: Game, highlight: Collection[str] = (), last: Collection[str] = ()) -> Drawing:
    """The position of ``game``; ``highlight`` cells outlined in red (to fix), ``last`` in blue.

    Each game module draws every cell as a polygon carrying its ``cell`` and ``content``."""
    module = import_module(f"{__name__}.{MODULES[game.name]}")
    drawing: Drawing = module.draw(game)
    marked = [
        (shape, ILLEGAL if shape.cell in highlight else LAST)
        for shape in drawing.shapes
        if shape.kind == "polygon"
        and shape.content is not None
        and (shape.cell in highlight or shape.cell in last)
    ]
    for shape, colour in marked:  # on top of everything, so that no neighbour hides them
        drawing.polygon(shape.points, None, stroke=colour, width=3.0)
    return drawing


#: The thin line round every cell.
GRID = {"stroke": "#6b6b6b", "width": 0.8}

__all__ = ["GRID", "ILLEGAL", "LAST", "Drawing", "draw"]
