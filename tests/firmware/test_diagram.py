"""Position diagrams: every cell drawn with what the engine knows is on it, in SVG and PNG."""

import re
import xml.etree.ElementTree as ET

import pytest

from firmware.diagram import ILLEGAL, LAST, draw
from tests.firmware.games import random_game

SVG = "{http://www.w3.org/2000/svg}"
GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")


def _cells(svg: str) -> dict[str, str]:
    root = ET.fromstring(svg)
    return {e.get("data-cell"): e.get("data-content") for e in root.iter() if e.get("data-content")}


@pytest.mark.parametrize("name", GAMES)
def test_every_cell_is_drawn_with_its_content(name):
    game = random_game(name, 2, actions=10)
    cells = _cells(draw(game).to_svg())
    assert set(cells) == set(game.cell_names)
    for cell, content in game.view().items():
        drawn = cells[cell]
        if content is None:
            assert drawn == "empty"
        elif name == "gobblet":
            assert drawn == f"{content.color} {content.size}"
        elif name == "spectrangle":
            assert drawn == "".join(content)
        else:
            assert drawn == content


def test_gobblet_shows_the_pieces_under_the_top():
    game = random_game("gobblet", 9, actions=30)
    stacked = [c for c in game.cell_names if len(game.stack(c)) > 1]
    assert stacked, "the seed should give a stack"
    svg = draw(game).to_svg()
    under = sum(len(game.stack(c)) - 1 for c in game.cell_names if game.stack(c))
    discs = len(re.findall(r"<circle", svg))
    tops = sum(1 for c in game.cell_names if game.stack(c))
    assert discs == tops + under


def test_cells_to_fix_and_the_last_move_are_outlined_on_top():
    game = random_game("blokus-duo", 1, actions=4)
    last = game.history[-1].cells()
    shapes = draw(game, highlight=["a1"], last=last).shapes
    tail = shapes[-(1 + len(last)) :]
    assert [s.stroke for s in tail].count(ILLEGAL) == 1
    assert [s.stroke for s in tail].count(LAST) == len(last)


@pytest.mark.parametrize("name", GAMES)
def test_png_is_the_same_drawing(name):
    drawing = draw(random_game(name, 3, actions=6))
    image = drawing.to_png(scale=1)
    assert image.size == (round(drawing.width), round(drawing.height))
    colours = {c for _, c in image.getcolors(1 << 20)}
    assert len(colours) > 3  # painted, not blank
