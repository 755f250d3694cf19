"""Change scores over the middle of a patch that is its target's own cell."""

from __future__ import annotations

import numpy as np
import pytest

from vision.change import box_mean, change_scores, own_window
from vision.geometry import load_geometry
from vision.sampling import PatchSpec


def test_a_change_beside_a_cell_is_no_change_of_it_within_its_window():
    rng = np.random.default_rng(3)
    before = rng.uniform(0.2, 0.8, (2, 3, 16, 16))
    now = before.copy()
    now[0, :, :, :3] = 1.0  # a piece put down beside target 0: only its patch's margin
    now[1, :, 6:10, 6:10] = 0.0  # a small piece put down on target 1: its middle
    whole = change_scores(now, before)
    own = change_scores(now, before, window=0.55)
    assert whole[0] > 0.5 and own[0] == pytest.approx(0.0, abs=1e-9)
    # a sixteenth of the whole patch is under its 90th percentile, a fifth of the window not
    assert own[1] > 0.5 and whole[1] == pytest.approx(0.0, abs=1e-9)
    assert np.array_equal(change_scores(now, before, window=1.0), whole)


def test_a_square_patch_s_own_window_is_its_cell_s_side_over_the_patch_s():
    square = PatchSpec(kind="square", size_mm=36.0, px=16, heights_mm=(2.0,))
    assert own_window(load_geometry("blokus"), square) == pytest.approx(20.0 / 36.0)
    edge = PatchSpec(kind="edge", size_mm=1.3, px=20, heights_mm=(1.5,))
    assert own_window(load_geometry("spectrangle"), edge) == 1.0


def test_a_box_averages_a_camera_s_noise_away_and_keeps_a_piece():
    rng = np.random.default_rng(5)
    board = rng.uniform(0.3, 0.7, (40, 3, 16, 16)).astype(np.float32)
    noisy = [board + rng.normal(0.0, 0.04, board.shape).astype(np.float32) for _ in range(2)]
    moved = noisy[1].copy()
    moved[:, :, 4:12, 4:12] = 0.95  # a piece put down on the middle of every patch
    plain, boxed = (change_scores(noisy[1], noisy[0], box=b) for b in (1, 3))
    # noise alone: averaged over 9 pixels, about a third of the score (white noise: 1/3)
    assert np.median(boxed) < 0.5 * np.median(plain)
    # a piece still changes its patch by far more than the noise does
    assert change_scores(moved, noisy[0], box=3).min() > 4 * boxed.max()


def test_box_mean_is_opencv_s_box_filter_and_a_box_of_one_is_nothing():
    import cv2

    planes = np.random.default_rng(1).uniform(0, 1, (4, 3, 16, 16)).astype(np.float32)
    ref = np.stack([[cv2.blur(p, (5, 5)) for p in patch] for patch in planes])
    assert np.allclose(box_mean(planes, 5), ref, atol=1e-6)
    assert box_mean(planes, 1) is planes
    with pytest.raises(ValueError, match="no middle"):
        box_mean(planes, 4)
