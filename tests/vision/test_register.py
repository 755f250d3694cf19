"""A mat found from its markers' outlines when no marker's bits can be decoded one by one."""

from __future__ import annotations

import itertools
from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision.locate
from vision.bench import corpus_scene
from vision.geometry import load_geometry
from vision.locate import BoardLocator, BoardNotFound, _dictionary
from vision.register import MAX_CANDIDATES, distinct, follow, register
from vision.synth import Domain


@pytest.fixture(scope="module")
def far_scene():
    """A held-out Spectrangle scene no detector pass reads: the camera 1.2 m away, the picture
    defocused and the mat over-exposed, its markers about 32 px a side."""
    return corpus_scene("spectrangle", 64, split="heldout", seed=99)


def _marker_error(pose, scene, geometry, moved=(0.0, 0.0)) -> float:
    """The largest distance (px) between a marker corner where ``pose`` puts it and where the
    scene drew it (through its lens: the first frame's pose has no lens estimate yet), the
    picture moved by ``moved`` px."""
    errors = []
    for marker in geometry.markers:
        corners = marker.corners().reshape(-1, 1, 2).astype(np.float64)
        ideal = cv2.perspectiveTransform(corners, scene.marker_homography).reshape(-1, 2)
        found = pose.to_image(marker.corners())
        drawn = scene.camera.distort(ideal) + np.float64(moved)
        errors.append(float(np.linalg.norm(drawn - found, axis=1).max()))
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
    # decoded, their corners a few px off; fitted alone they put the far markers 76 px off (as
    # drawn before the held-out sets' feet faded: the fade moves the frame's exposure)
    unfaded = replace(Domain.HELDOUT, foot_fades=0.0)
    scene = corpus_scene("gobblet", 47, split="heldout", seed=99, domain=unfaded)
    geometry = load_geometry("gobblet")
    pose = BoardLocator([geometry]).locate(scene.image, 0.0)
    assert len(pose.markers_seen) == 8 and _marker_error(pose, scene, geometry) < 1.5
    assert len(pose.markers_registered) == 6  # the two decoded ones are not
    # without the registration, the outlines are followed from the two markers' poor fit,
    # nearest first (each find refits), to the same place
    monkeypatch.setattr(vision.locate, "register", lambda *args: None)
    followed = BoardLocator([geometry]).locate(scene.image, 0.0)
    assert len(followed.markers_seen) == 8 and _marker_error(followed, scene, geometry) < 1.5
    assert set(followed.markers_registered) == set(pose.markers_registered)
    monkeypatch.setattr(vision.locate, "follow", lambda *args: None)
    alone = BoardLocator([geometry]).locate(scene.image, 0.0)
    assert len(alone.markers_seen) == 2 and _marker_error(alone, scene, geometry) > 20


def test_a_registered_mat_is_tracked_by_its_outlines(far_scene, monkeypatch):
    # frames of the far scene, each with its own sensor noise: once its markers are
    # established, the fast pass follows their outlines where the pose puts them, instead of
    # registering the mat again in every frame; a marker's outline gives its centre (blur and
    # bled paper move an outline's corners, not its middle), so a few of them keep the pose
    geometry = load_geometry("spectrangle")
    calls = []

    def registering(*args):
        calls.append(1)
        return register(*args)

    monkeypatch.setattr(vision.locate, "register", registering)
    locator = BoardLocator([geometry])
    rng = np.random.default_rng(5)
    errors, followed = [], []
    for k in range(10):
        noise = rng.normal(0.0, 2.0, far_scene.image.shape)
        frame = np.clip(far_scene.image + noise, 0, 255).astype(np.uint8)
        pose = locator.locate(frame, 0.1 * k)
        errors.append(_marker_error(pose, far_scene, geometry))
        followed.append(len(pose.markers_registered))
    assert len(calls) == BoardLocator.ESTABLISHED_HITS  # until its markers are established
    assert max(errors) < 1.5, errors
    assert min(followed[BoardLocator.ESTABLISHED_HITS :]) >= 3


def _noisy(image: np.ndarray, rng: np.random.Generator, shift=(0.0, 0.0)) -> np.ndarray:
    """``image`` with sensor noise, moved by ``shift`` px."""
    frame = np.clip(image + rng.normal(0.0, 2.0, image.shape), 0, 255).astype(np.uint8)
    move = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
    return cv2.warpAffine(frame, move, frame.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)


def test_a_still_far_mat_holds_its_pose_and_a_moved_one_is_followed(far_scene):
    # the far scene's markers are found a little differently in every noisy frame (and only
    # three of six once the fast pass follows their outlines): while they do not move in the
    # image the pose is the mean of the fits, and a move of two pixels is followed at once,
    # by the markers still seen
    geometry = load_geometry("spectrangle")
    locator = BoardLocator([geometry])
    rng = np.random.default_rng(5)
    poses = [locator.locate(_noisy(far_scene.image, rng), 0.1 * k) for k in range(8)]
    settled = poses[BoardLocator.CALIBRATION_FITS + 1 :]
    assert all(p.shift(q) == 0.0 for p, q in itertools.pairwise(settled))
    assert max(_marker_error(p, far_scene, geometry) for p in poses) < 1.5
    for k in range(3):
        moved = locator.locate(_noisy(far_scene.image, rng, (2.0, 1.0)), 0.8 + 0.1 * k)
        assert _marker_error(moved, far_scene, geometry, (2.0, 1.0)) < 1.5


def test_markers_found_differently_on_a_still_image_do_not_move_the_pose(far_scene, monkeypatch):
    # every detection of the same still frames lands 1 px to the right, then 1 px to the left
    # (as a blurred marker's does, found where the last pose puts it): the image does not move,
    # so the pose settles between the two (f6f90cc's deadband kept one swayed fit: 1.8 px off)
    geometry = load_geometry("spectrangle")
    detect, calls = BoardLocator._detect, []

    def swaying(self, grey, expected):
        found, looked = detect(self, grey, expected)
        calls.append(1)
        sway = np.float64([1.0 if len(calls) % 2 else -1.0, 0.0])
        return {n: {i: q + sway for i, q in quads.items()} for n, quads in found.items()}, looked

    monkeypatch.setattr(BoardLocator, "_detect", swaying)
    locator = BoardLocator([geometry])
    poses = [locator.locate(far_scene.image, 0.1 * k) for k in range(12)]
    shifts = [p.shift(q) for p, q in itertools.pairwise(poses)]
    assert max(shifts[6:]) < 1.0, shifts
    assert _marker_error(poses[-1], far_scene, geometry) < 1.5


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


def test_an_outline_is_followed_only_as_the_marker_its_bits_show_where_the_pose_puts_it():
    dictionary = _dictionary("DICT_4X4_50")
    image = np.full((200, 200), 255, np.uint8)
    image[60:120, 70:130] = dictionary.generateImageMarker(7, 60)
    outline = np.float64([[70, 60], [130, 60], [130, 120], [70, 120]])
    expected = outline + np.float64([4.0, -3.0])  # where a slightly stale pose puts it
    candidates = np.stack([outline + np.float64([90, 0]), outline])  # another outline, and its own
    found = follow(image, expected, candidates, 7, dictionary)
    # its centre is the outline's, its shape the pose's (an outline's corners move with blur)
    assert found is not None and np.allclose(found, outline)
    assert follow(image, expected, candidates, 8, dictionary) is None  # other bits
    far = expected + np.float64([40, 0])  # two thirds of a side off
    assert follow(image, far, candidates, 7, dictionary) is None
    turned = np.roll(outline, 1, axis=0)  # the same outline listed from another corner
    assert np.allclose(follow(image, expected, turned[None], 7, dictionary), outline)
