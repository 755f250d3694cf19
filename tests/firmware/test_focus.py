"""The doctor's focus measure on rendered scenes: sharp ones pass, the same blurred do not."""

import cv2
import pytest

from firmware.doctor import FIX, OK, _check_board
from firmware.focus import SOFT_EDGE_PX, edge_width
from vision.locate import BoardLocator
from vision.synth import render_scene


@pytest.mark.parametrize(("game", "seed"), [("blokus", 1), ("gobblet", 2), ("gobsmacked", 1)])
def test_sharp_scenes_pass_and_blurred_ones_do_not(game, seed):
    image = render_scene(game, {}, seed, hand=False).image
    pose = BoardLocator().locate(image, 0.0)
    sharp = edge_width(image, pose)
    soft = edge_width(cv2.GaussianBlur(image, (0, 0), 1.5), pose)
    assert sharp <= SOFT_EDGE_PX < soft
    assert soft > sharp + 0.5


def test_the_doctor_says_how_to_focus():
    image = render_scene("blokus", {}, 1, hand=False).image
    said = []
    _check_board(lambda state, text: said.append((state, text)), image)
    assert [s for s, t in said if t.startswith("focus:")] == [OK]
    said.clear()
    blurred = cv2.GaussianBlur(image, (0, 0), 2.5)
    _check_board(lambda state, text: said.append((state, text)), blurred)
    [(state, text)] = [(s, t) for s, t in said if t.startswith("focus:")]
    assert state == FIX and "lens_position" in text
