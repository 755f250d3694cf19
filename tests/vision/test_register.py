"""A mat found from its markers' outlines when no marker's bits can be decoded one by one."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.locate
from vision.bench import corpus_scene
from vision.geometry import load_geometry
from vision.locate import BoardLocator, BoardNotFound, _dictionary
from vision.register import MAX_CANDIDATES, distinct, register


@pytest.fixture(scope="module")
def far_scene():
    """A held-out Spectrangle scene no detector pass reads: the camera 1.2 m away, the picture
    defocused and the mat over-exposed, its markers about 32 px a side."""
    return corpus_scene("spectrangle", 64, split="heldout", seed=99)


def _marker_error(pose, scene, geometry) -> float:
    """The largest distance (px) between a marker corner where ``pose`` puts it and where the
    scene drew it (through its lens: the first frame's pose has no lens estimate yet)."""
    errors = []
    for marker in geometry.markers:
        corners = marker.corners().reshape(-1, 1, 2).astype(np.float64)
        ideal = cv2.perspectiveTransform(corners, scene.marker_homography).reshape(-1, 2)
        found = pose.to_image(marker.corners())
        errors.append(float(np.linalg.norm(scene.camera.distort(ideal) - found, axis=1).max()))
    return max(errors)


def test_a_mat_whose_markers_no_pass_decodes_is_registered_from_their_outlines(
    far_scene, monkeypatch
):
    geometry = load_geometry("spectrangle")
    pose = BoardLocator([geometry]).locate(far_scene.image, 0.0)
    assert set(pose.markers_seen) == {m.id for m in geometry.markers}
    assert pose.markers_registered == pose.markers_seen  # none read alone
    assert _marker_error(pose, far_scene, geometry) < 1.5  # markers 28 px a side
    # without the registration, no pass of the locator finds it
    monkeypatch.setattr(vision.locate, "register", lambda *args: None)
    with pytest.raises(BoardNotFound):
        BoardLocator([geometry]).locate(far_scene.image, 0.0)


def test_two_degraded_markers_are_not_left_to_fit_the_whole_mat(monkeypatch):
    # a held-out Gobblet scene (defocused, over-exposed, markers about 28 px): two markers are
    # decoded, their corners a few px off; fitted alone they put the far markers 76 px off
    scene = corpus_scene("gobblet", 47, split="heldout", seed=99)
    geometry = load_geometry("gobblet")
    pose = BoardLocator([geometry]).locate(scene.image, 0.0)
    assert len(pose.markers_seen) == 8 and _marker_error(pose, scene, geometry) < 1.5
    assert len(pose.markers_registered) == 6  # the two decoded ones are not
    monkeypatch.setattr(vision.locate, "register", lambda *args: None)
    alone = BoardLocator([geometry]).locate(scene.image, 0.0)
    assert len(alone.markers_seen) == 2 and _marker_error(alone, scene, geometry) > 20


def test_outlines_without_the_markers_bits_are_no_mat(far_scene, monkeypatch):
    # every marker's data modules painted grey: the outlines are all there, the bits are not
    geometry = load_geometry("spectrangle")
    calls = []

    def registering(grey, quads, layout, dictionary):
        calls.append((len(quads), register(grey, quads, layout, dictionary)))
        return calls[-1][1]

    monkeypatch.setattr(vision.locate, "register", registering)
    image = far_scene.image.copy()
    for marker in geometry.markers:
        inner = (marker.corners() - marker.center) * 4 / 6 + marker.center  # within the border
        quad = cv2.perspectiveTransform(
            inner.reshape(-1, 1, 2).astype(np.float64), far_scene.marker_homography
        )
        cv2.fillConvexPoly(image, np.round(quad).astype(np.int32), (128, 128, 128))
    with pytest.raises(BoardNotFound):
        BoardLocator([geometry]).locate(image, 0.0)
    [(quads, found)] = calls
    assert quads >= len(geometry.markers) and found is None


def test_a_patterned_surface_is_not_searched(far_scene):
    # more outlines than a mat seen badly has: not registered (and not seconds spent on it)
    geometry = load_geometry("spectrangle")
    layout = {m.id: m.corners() for m in geometry.markers}
    square = np.array([[0, 0], [20, 0], [20, 20], [0, 20]], np.float64)
    quads = np.stack([square + np.array([30 * i, 40]) for i in range(2 * MAX_CANDIDATES + 1)])
    grey = cv2.cvtColor(far_scene.image, cv2.COLOR_BGR2GRAY)
    assert register(grey, quads, layout, _dictionary(geometry.aruco_dictionary)) is None


def test_an_outline_found_twice_counts_once():
    square = np.array([[0, 0], [20, 0], [20, 20], [0, 20]], np.float64)
    # the same outline from the other image, starting at another corner, half a pixel off
    twice = np.stack([square, np.roll(square, 1, axis=0) + 0.5, square + 50.0])
    assert len(distinct(twice)) == 2
