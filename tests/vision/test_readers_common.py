"""The helpers the readers share: sampling, the mat's references, probabilities and the
observation builder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Observation
from vision.geometry import load_geometry
from vision.locate import BoardLocator
from vision.readers.common import (
    MIN_PROBABILITY,
    MatReference,
    PointSet,
    Region,
    bounded,
    observation,
    ring,
    sample_image,
)
from vision.synth import render_scene


def _gradient(h: int = 120, w: int = 160) -> np.ndarray:
    """A smooth BGR image whose channels are linear in x and y (bilinear sampling is exact)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    return np.dstack([x, y, 0.5 * x + 0.5 * y]).astype(np.float32)


# --------------------------------------------------------------------------- sampling
def test_sample_image_is_bilinear_at_any_number_of_points():
    image = _gradient()
    rng = np.random.default_rng(1)
    # more points than one cv2.remap row may hold (32767)
    pts = rng.uniform([0, 0], [159, 119], size=(40_000, 2))
    out = sample_image(image, pts)
    assert out.shape == (40_000, 3)
    np.testing.assert_allclose(out[:, 0], pts[:, 0], atol=0.05)
    np.testing.assert_allclose(out[:, 1], pts[:, 1], atol=0.05)
    assert sample_image(image, np.zeros((0, 2))).shape == (0, 3)


def test_a_shrunk_region_samples_like_the_frame():
    image = _gradient(240, 320)
    pts = np.random.default_rng(2).uniform([40, 30], [280, 200], size=(500, 2))
    region = Region.around(image.shape, pts, factor=2)
    x0, y0, x1, y1 = region.box
    assert x1 - x0 < image.shape[1] and y1 - y0 < image.shape[0]
    np.testing.assert_allclose(region.sample(image), sample_image(image, pts), atol=0.3)
    # the region samples any frame of that shape: another picture's colours at the same points
    np.testing.assert_allclose(region.sample(2 * image), 2 * sample_image(image, pts), atol=0.6)


def test_point_sets_group_their_points():
    groups = [np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[1.0, 1.0]]), np.ones((3, 2)) * 5]
    ps = PointSet.from_groups(groups, height_mm=3.0)
    assert ps.groups == 3
    assert ps.owner.tolist() == [0, 0, 1, 2, 2, 2]
    values = np.array([1.0, 3.0, 7.0, 2.0, 4.0, 9.0])
    np.testing.assert_allclose(ps.group_reduce(values), [4.0, 7.0, 15.0])
    np.testing.assert_allclose(ps.group_median(values), [2.0, 7.0, 4.0])
    with pytest.raises(ValueError):
        PointSet.from_groups([np.zeros((0, 2))])


def test_a_ring_runs_round_its_square():
    pts = ring((10.0, 20.0), 5.0, 1.0)
    assert len(pts) == 40
    off = np.abs(pts - (10.0, 20.0))
    np.testing.assert_allclose(off.max(axis=1), 5.0)


# --------------------------------------------------------------------------- references
@pytest.fixture(scope="module")
def mat_scene():
    scene = render_scene("blokus", {}, 7, hand=False, tilt_deg=15.0)
    geometry = load_geometry("blokus")
    return scene, geometry, BoardLocator([geometry]).locate(scene.image, 0.0)


def test_the_mat_gives_paper_white_and_marker_black(mat_scene):
    scene, geometry, pose = mat_scene
    mat = MatReference(geometry)
    ref = mat.measure(scene.image, pose)
    assert len(ref.markers) >= 6
    assert np.all(ref.white > 2.5 * ref.black)
    paper = mat.white_points.sample(scene.image, pose)
    print_ = mat.black_points.sample(scene.image, pose)
    assert np.median(ref.normalise(paper), axis=0) == pytest.approx([1, 1, 1], abs=0.08)
    assert np.median(ref.normalise(print_), axis=0) == pytest.approx([0, 0, 0], abs=0.08)
    assert 0 < ref.noise < 0.1


def test_normalised_colours_do_not_change_with_the_light(mat_scene):
    scene, geometry, pose = mat_scene
    mat = MatReference(geometry)
    cells = PointSet.from_groups([np.array([c.center]) for c in geometry.cells], 5.0)
    before = mat.measure(scene.image, pose).normalise(cells.sample(scene.image, pose))
    # warm, dimmer light
    warm = np.clip(scene.image * np.array([0.6, 0.8, 1.0]), 0, 255).astype(np.uint8)
    ref = mat.measure(warm, pose)
    after = ref.normalise(cells.sample(warm, pose))
    np.testing.assert_allclose(np.median(after, axis=0), np.median(before, axis=0), atol=0.03)
    white_before = mat.measure(scene.image, pose).white
    np.testing.assert_allclose(ref.white / white_before, [0.6, 0.8, 1.0], rtol=0.06)


def test_the_mat_measured_after_another_pose_is_measured_at_this_one(mat_scene):
    """The rings' image points are kept from one frame to the next only while the pose is the
    same: a frame of the board shifted 40 px, measured after the first, reads as a fresh
    measure of it does."""
    scene, geometry, pose = mat_scene
    moved_frame = np.zeros_like(scene.image)
    moved_frame[:, 40:] = scene.image[:, :-40]
    moved = BoardLocator([geometry]).locate(moved_frame, 0.0)
    assert not np.allclose(moved.homography, pose.homography)
    mat = MatReference(geometry)
    mat.measure(scene.image, pose)
    again = mat.measure(moved_frame, moved)
    fresh = MatReference(geometry).measure(moved_frame, moved)
    np.testing.assert_array_equal(again.white, fresh.white)
    np.testing.assert_array_equal(again.black, fresh.black)
    assert again.markers == fresh.markers


# --------------------------------------------------------------------------- probabilities
@settings(derandomize=True, max_examples=50)
@given(st.lists(st.floats(-50, 50), min_size=3, max_size=3), st.floats(0.1, 40))
def test_probabilities_sum_to_one_and_keep_a_floor(logits, scale):
    e = np.exp(scale * np.array([logits]) - scale * max(logits))
    p = bounded(e / e.sum())
    assert p.sum() == pytest.approx(1.0)
    assert p.min() >= MIN_PROBABILITY * 0.99
    assert p.argmax() == int(np.argmax(logits)) or np.isclose(max(logits), sorted(logits)[-2])


def test_the_observation_leaves_hidden_cells_out():
    probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    obs = observation("blokus", ["a1", "b1", "c1"], [None, "orange"], probs, hidden={"c1"})
    assert isinstance(obs, Observation)
    assert obs.cells == {"a1": None, "b1": "orange"}
    assert obs.partial and obs.occluded
    assert obs.confidence["b1"] == pytest.approx(max(obs.probabilities["b1"].values()))
    clear = observation("blokus", ["a1"], [None, "orange"], probs[:1])
    assert not clear.partial and not clear.occluded
    flagged = observation("blokus", ["a1"], [None, "orange"], probs[:1], occluded=True)
    assert flagged.occluded and not flagged.partial
