"""The status line of the camera's view, held steady over the camera's noise."""

from __future__ import annotations

from dataclasses import replace

import pytest

from firmware.view_status import ViewStatus
from vision.adapt import READS_UNSURE
from vision.locate import MARKERS_BLURRED, OVER_EXPOSED, TOO_FAR, BoardLocator
from vision.synth import render_scene


@pytest.fixture(scope="module")
def pose():
    scene = render_scene("gobsmacked", {}, 3, hand=False)
    return BoardLocator.for_game("gobsmacked").locate(scene.image, 0.0)


def test_a_line_is_held_a_while_after_its_cause_and_then_dropped(pose):
    assert not pose.too_far and not pose.markers_bled and not pose.markers_registered
    status = ViewStatus(hold_s=3.0)
    bled = replace(pose, markers_bled=pose.markers_seen[:1])
    assert status.update(pose, 0.0) == ""
    assert status.update(bled, 1.0) == OVER_EXPOSED
    # the next frames read every marker plainly: the line stays, then goes
    assert [status.update(pose, t) for t in (1.1, 2.5, 3.9, 4.1)] == [OVER_EXPOSED] * 3 + [""]
    assert status.update(None, 4.2) == ""  # no board found says nothing of the markers


def test_the_most_pressing_line_held_is_shown(pose):
    status = ViewStatus(hold_s=3.0)
    outlined = replace(pose, markers_registered=pose.markers_seen[:2])
    assert status.update(outlined, 0.0) == MARKERS_BLURRED
    far = replace(outlined, marker_px=12.0)
    assert far.too_far and status.update(far, 1.0) == TOO_FAR
    assert status.update(pose, 2.0) == TOO_FAR  # both held; too far comes first
    assert status.update(pose, 3.5) == TOO_FAR  # blurred has gone, too far not yet
    assert status.update(pose, 4.5) == ""


def test_a_table_whose_reads_the_moves_contradict_is_told_last(pose):
    status = ViewStatus(hold_s=3.0)
    assert status.update(pose, 0.0, reads_unsure=True) == READS_UNSURE
    assert status.update(None, 0.5, reads_unsure=True) == READS_UNSURE  # held, not renewed
    outlined = replace(pose, markers_registered=pose.markers_seen[:2])
    assert status.update(outlined, 1.0, reads_unsure=True) == MARKERS_BLURRED  # the view first
    assert status.update(pose, 4.5) == ""  # a new game: the reads are no longer doubted
