"""The Pi camera on a picamera2 stand-in (tests/firmware/picamera2_standin.py): a bumped cable
times out instead of hanging, the camera is reopened when it is back, the lens, flicker, sensor
mode and exposure constraint are asked for, and exposure is locked once the board is
calibrated."""

import sys
from dataclasses import replace

import numpy as np
import pytest
from luma.core.device import dummy

from firmware.camera import LOST, OK, CameraError, PiCamera
from firmware.config import load_config
from firmware.display import Display
from firmware.doctor import check_camera
from firmware.loop import Phase, RefereeLoop
from tests.firmware.picamera2_standin import CAMERA_MODULE_2, Rig
from vision.synth import render_scene

SIZE = (1280, 960)


@pytest.fixture(scope="module")
def board() -> np.ndarray:
    return render_scene("gobblet", {}, 1, hand=False).image


@pytest.fixture
def rig(board, monkeypatch):
    rig = Rig(board)
    monkeypatch.setitem(sys.modules, "picamera2", rig.module())
    return rig


def camera(rig, **options):
    return PiCamera(SIZE, frame_timeout=5.0, retry_seconds=2.0, clock=rig.clock, **options)


def test_a_bumped_cable_times_out_then_the_camera_is_reopened(rig):
    with camera(rig) as cam:
        assert cam.read()[0] and cam.status.state == OK
        rig.plugged = False  # the cable is bumped: frames stop, nothing raises
        start = rig.now
        ok, frame, t = cam.read()
        assert (ok, frame) == (False, None) and t - start == pytest.approx(5.0)
        assert cam.status.state == LOST and "no frame for 5 s" in cam.status.message
        assert rig.flushed == 1  # the pending capture was cancelled before closing
        assert cam.status.line == "camera lost"
        rig.now += 2.0
        assert cam.read()[0] is False and cam.status.line == "camera lost, retry 1"
        rig.plugged = True
        rig.now += 2.0
        ok, frame, _ = cam.read()
        assert ok and frame.shape == (SIZE[1], SIZE[0], 3) and cam.status.ok
        assert rig.opened == 2  # opened, then reopened once it was back


def test_the_camera_is_asked_for_the_full_field_lens_and_flicker(rig):
    with camera(rig, sensor_size=(2304, 1296), lens_position=1.8, flicker_hz=50):
        config = rig.configs[-1]
        assert config["main"] == {"size": SIZE, "format": "RGB888"}
        assert config["sensor"] == {"output_size": (2304, 1296)}
        assert rig.controls["AfMode"] == 0 and rig.controls["LensPosition"] == 1.8
        assert rig.controls["AeFlickerMode"] == 1 and rig.controls["AeFlickerPeriod"] == 10000
    with camera(rig, flicker_hz=60, sensor_size=None):
        assert rig.configs[-1]["sensor"] == {} and rig.controls["AeFlickerPeriod"] == 8333


def test_auto_exposure_guards_the_highlights_unless_told_otherwise(rig, board, monkeypatch):
    with camera(rig) as cam:
        assert rig.configs[-1]["controls"]["AeConstraintMode"] == 1  # ConstraintHighlight
        assert "exposure constraint highlight" in cam.notes
    with camera(rig, exposure_constraint="normal") as cam:
        assert rig.configs[-1]["controls"]["AeConstraintMode"] == 0
        assert "exposure constraint normal" in cam.notes
    with pytest.raises(CameraError, match="not one of normal, highlight, shadows"):
        camera(rig, exposure_constraint="bright")
    older = Rig(board, controls=tuple(c for c in CAMERA_MODULE_2 if c != "AeConstraintMode"))
    monkeypatch.setitem(sys.modules, "picamera2", older.module())
    with camera(older) as cam:  # a camera without the control gets none, and works
        assert cam.read()[0] and "AeConstraintMode" not in older.configs[-1]["controls"]
        assert "no exposure constraint on this camera" in cam.notes


def test_focus_once_runs_one_autofocus_cycle_and_falls_back_to_the_lens_position(rig):
    with camera(rig, focus="once") as cam:
        assert rig.autofocus_cycles == 1 and cam.focus_note == "autofocus cycle focused"
    rig.autofocus_succeeds = False
    with camera(rig, focus="once", lens_position=2.0) as cam:
        assert rig.controls["LensPosition"] == 2.0 and "autofocus failed" in cam.focus_note


def test_a_fixed_focus_camera_gets_no_focus_controls(board, monkeypatch):
    rig = Rig(board, controls=CAMERA_MODULE_2)  # the stand-in refuses unadvertised controls
    monkeypatch.setitem(sys.modules, "picamera2", rig.module())
    with camera(rig, focus="once", flicker_hz=50) as cam:
        assert cam.status.ok and cam.focus_note == "fixed-focus lens"
        assert "LensPosition" not in rig.controls and rig.controls["AeFlickerMode"] == 1


def test_exposure_is_locked_at_the_measured_values_and_again_after_a_reconnection(rig):
    with camera(rig) as cam:
        assert cam.lock_exposure()
        expected = {"AeEnable": False, "AwbEnable": False, **rig.metadata}
        assert {k: rig.controls[k] for k in expected} == expected
        rig.metadata["ExposureTime"] = 99  # the light changes: a lock stays a lock
        assert cam.lock_exposure() and rig.controls["ExposureTime"] == 12000
        rig.plugged = False
        cam.read()
        rig.plugged, rig.controls = True, {}
        rig.now += 2.0
        assert cam.read()[0]
        assert rig.configs[-1]["controls"]["ExposureTime"] == 12000  # set again on reopening
    with camera(rig, lock_exposure=False) as cam:
        assert not cam.lock_exposure()


def test_the_loop_locks_exposure_shows_camera_lost_and_goes_on_when_it_is_back(rig, tmp_path):
    cam = camera(rig)
    display = Display(dummy(width=128, height=64, mode="1"))
    reports = []
    loop = RefereeLoop(
        cam,
        display,
        game="gobblet",
        journal_dir=tmp_path,
        records_dir=tmp_path / "records",
        on_report=lambda r: reports.append(r.text),
    )
    for _ in range(12):  # the empty board settles: the game starts, vision calibrates
        loop.step()
    assert loop.phase == Phase.PLAY
    assert "camera exposure and white balance locked" in reports
    assert cam.locked["ExposureTime"] == 12000
    rig.plugged = False
    loop.step()  # one capture that times out after 5 s (on the rig's clock)
    assert "camera lost" in display.screen.text
    for _ in range(3):
        rig.now += 1.0
        loop.step()
    assert "camera lost, retry" in display.screen.text and rig.now - 100 > 5
    rig.plugged = True
    rig.now += 2.0
    for _ in range(3):
        loop.step()
    assert cam.status.ok and "camera lost" not in display.screen.text
    assert loop.phase == Phase.PLAY  # still refereeing the same game
    loop.close()
    cam.close()


def test_the_doctor_names_the_focus_and_exposure_the_camera_took(rig):
    config = load_config(None)
    config = replace(config, camera=replace(config.camera, source="picamera2", focus="once"))
    said: list[tuple[str, str]] = []
    check_camera(lambda state, text: said.append((state, text)), config)
    [line] = [text for _, text in said if text.startswith("camera (picamera2)")]
    assert line.split(", ") == [
        "camera (picamera2): 1280x960 frames",
        "autofocus cycle focused",
        "exposure constraint highlight",
    ]
