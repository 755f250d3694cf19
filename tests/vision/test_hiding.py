"""Markers that a piece standing on the board hides from a tilted camera: the outlines of
rendered tall pieces cover every marker the locator then misses, and the pipeline reads a still
board whose missing markers a piece read stands in front of, but not one whose missing marker
something else covers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.geometry import load_geometry
from vision.hiding import markers_coverable, markers_covered, standing_sizes
from vision.locate import BoardLocator
from vision.pipeline import STILL_OCCLUDED, VisionPipeline
from vision.settle import OCCLUDED, SETTLED
from vision.synth import render_scene

GOBBLET = load_geometry("gobblet")
EDGE = [c.name for c in GOBBLET.cells if c.name[0] in "ad" or c.name[1] in "14"]
#: the twelve edge squares: six pieces of the largest size, six of the next (what a box holds)
TALL = {
    name: {"color": "black" if i % 2 else "white", "size": 4 if i < 6 else 3}
    for i, name in enumerate(EDGE)
}
FPS = 10


def _standing(cells: dict) -> list:
    sizes = standing_sizes(GOBBLET)
    return [(name, sizes[value["size"]]) for name, value in cells.items()]


def test_tall_pieces_cover_every_marker_the_locator_misses():
    # the largest piece on every edge square (no box holds twelve, but the geometry is the
    # point here)
    tallest = {name: {"color": ("white", "black")[i % 2], "size": 4} for i, name in enumerate(EDGE)}
    hidden = 0
    for seed in range(12):
        for tilt in (35.0, 40.0):
            scene = render_scene("gobblet", tallest, seed, tilt_deg=tilt, hand=False, effects=False)
            pose = BoardLocator([GOBBLET]).locate(scene.image, 0.0)
            missed = GOBBLET.marker_ids - set(pose.markers_seen)
            covered = markers_covered(pose, _standing(tallest))
            assert missed <= covered, (seed, tilt)
            assert covered <= markers_coverable(pose)
            assert not markers_covered(pose, [])
            hidden += len(missed)
    assert hidden >= 3  # the scenes do hide markers


def test_flat_pieces_cover_no_marker():
    scene = render_scene("blokus", {}, 3, tilt_deg=40.0, hand=False, effects=False)
    pose = BoardLocator.for_game("blokus").locate(scene.image, 0.0)
    assert standing_sizes(pose.geometry) == {}
    assert markers_coverable(pose) == frozenset()


def _settle(pipeline: VisionPipeline, image: np.ndarray, t: float, frames: int):
    return [pipeline.process(image, t + k / FPS) for k in range(frames)]


@pytest.fixture(scope="module")
def hiding_view():
    """A camera (seed 2, tilted 40 degrees) from which a tall edge piece hides marker 3: the
    empty board and the board with the twelve pieces, through the same camera."""
    empty = render_scene("gobblet", {}, 2, tilt_deg=40.0, hand=False, effects=False)
    full = render_scene("gobblet", TALL, 2, tilt_deg=40.0, hand=False, effects=False)
    return empty.image, full.image


def test_a_marker_a_read_piece_stands_in_front_of_lets_the_board_settle(hiding_view):
    empty, full = hiding_view
    pipeline = VisionPipeline("gobblet")
    first = _settle(pipeline, empty, 0.0, 10)
    assert [r.status for r in first].count(SETTLED) == 1
    after = _settle(pipeline, full, 1.0, 20)
    assert all(r.pose.markers_missing == (3,) for r in after)  # hidden the whole time
    settled = [r for r in after if r.status == SETTLED]
    assert len(settled) == 1
    reader = pipeline.reader(GOBBLET)
    expected = {name: reader.content(f"{v['color']}-{v['size']}") for name, v in TALL.items()}
    assert {name: settled[0].observation.cells[name] for name in TALL} == expected


def test_a_marker_covered_by_something_else_holds_the_board_back(hiding_view):
    # a dark card lying on marker 3 of the empty board: a marker a piece could hide, but no
    # piece is read in front of it
    empty, _ = hiding_view
    pipeline = VisionPipeline("gobblet")
    first = _settle(pipeline, empty, 0.0, 10)
    pose = first[-1].pose
    marker = next(m for m in GOBBLET.markers if m.id == 3)
    assert 3 in markers_coverable(pose)
    card = empty.copy()
    corners = pose.to_image(marker.corners().astype(np.float64) * 1.0)
    centre = corners.mean(axis=0)
    grown = centre + (corners - centre) * 1.4
    cv2.fillConvexPoly(card, np.round(grown).astype(np.int32), (60, 55, 50), cv2.LINE_AA)
    held = _settle(pipeline, card, 1.0, 20)
    assert all(r.pose.markers_missing == (3,) for r in held)
    assert SETTLED not in [r.status for r in held]
    assert (OCCLUDED, STILL_OCCLUDED) in [(r.status, r.reason) for r in held]
