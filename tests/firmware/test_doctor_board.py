"""The doctor's lines on the board, on rendered scenes: a board off its corner marks is
measured, a board whose edges cannot be seen is said to be read on its marks, and a hand over the
board is named where it lies."""

import zlib

import numpy as np
import pytest

from firmware.doctor import FIX, OK, _check_board
from tests.vision.data.scenes import bled
from vision.bench import corpus_scene
from vision.bench_table import filmed_game
from vision.synth import Domain, random_position, render_scene


def _board_line(image):
    said = []
    _check_board(lambda state, text: said.append((state, text)), image)
    [(state, text)] = [(s, t) for s, t in said if t.startswith("board:")]
    return state, text


def test_a_board_off_its_marks_is_measured():
    image = render_scene("blokus", {}, 11, hand=False, board_shift=(3.0, -2.0, 1.5)).image
    state, text = _board_line(image)
    assert state == OK
    words = text.split()  # board: 3.6 mm and +1.5 degrees off its corner marks
    # the board's middle moved by (3, -2) mm and turned 1.5 degrees
    assert float(words[1]) == pytest.approx((3.0**2 + 2.0**2) ** 0.5, abs=0.6)
    assert float(words[4]) == pytest.approx(1.5, abs=0.3)


def test_a_board_whose_edges_do_not_show_is_read_on_its_marks():
    # a held-out table: a white board on the white mat under a dim lamp
    key = zlib.crc32(b"table/heldout/2026/blokus/7")
    shot = next(filmed_game("blokus", key, Domain.HELDOUT, moves=0))
    state, text = _board_line(shot.image)
    assert state == FIX and "lay it exactly on them" in text


def test_markers_read_only_in_linear_light_say_the_mat_is_over_exposed():
    far = Domain(name="far", zoom=(1.8, 1.8))
    clean = render_scene("spectrangle", {}, 1, hand=False, effects=False, domain=far).image
    said = {"clean": [], "bled": []}
    _check_board(lambda state, text: said["clean"].append((state, text)), clean)
    _check_board(lambda state, text: said["bled"].append((state, text)), bled(clean, 1.5, 1.5))
    assert not [t for _, t in said["clean"] if t.startswith("exposure:")]
    [(state, text)] = [(s, t) for s, t in said["bled"] if t.startswith("exposure:")]
    assert state == FIX and "of 6 markers read only" in text and "lamp" in text


def _view_line(image):
    said = []
    _check_board(lambda state, text: said.append((state, text)), image)
    [(state, text)] = [(s, t) for s, t in said if t.startswith("view:")]
    return state, text


@pytest.mark.parametrize("game", ["gobblet", "blokus"])
def test_a_board_with_nothing_over_it_is_said_to_be_clear_and_a_hand_is_named(game):
    position = random_position(game, np.random.default_rng(3))
    clear = render_scene(game, position, 3, hand=False)
    state, text = _view_line(clear.image)
    pieces = sum(v is not None for v in position.values())
    assert state == OK and text.startswith(f"view: nothing over the board ({pieces} of ")
    # the same board with a hand over it: the cells it names as most foreign lie under the hand
    hand = render_scene(game, position, 3, hand=True)
    assert hand.occluded and hand.hidden
    state, text = _view_line(hand.image)
    assert state == FIX and "OK on the" in text
    named = text.split("(most at ")[1].split(")")[0].split(", ")
    assert set(named) & hand.hidden


def test_markers_found_only_from_their_outlines_are_said_to_be_hard_to_read():
    # a held-out scene whose markers no detector pass reads: the mat is registered from their
    # outlines, and the doctor says what to do
    far = corpus_scene("spectrangle", 64, split="heldout", seed=99)
    said = []
    _check_board(lambda state, text: said.append((state, text)), far.image)
    [(state, text)] = [(s, t) for s, t in said if t.startswith("marker bits:")]
    assert state == FIX and text.startswith("marker bits: 6 of 6 markers found only")
    clean = render_scene("spectrangle", {}, 1, hand=False)
    said.clear()
    _check_board(lambda state, text: said.append((state, text)), clean.image)
    assert not [t for _, t in said if t.startswith("marker bits:")]
