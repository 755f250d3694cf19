"""Camera sources read back real files written with OpenCV; lost cameras report and reconnect."""

import subprocess
import sys
from dataclasses import replace

import cv2
import numpy as np
import pytest

from firmware import screens
from firmware.camera import (
    ENDED,
    LOST,
    PICAMERA2_MISSING,
    CameraError,
    ImageFolder,
    LiveCapture,
    PiCamera,
    VideoFile,
    open_camera,
)
from firmware.config import load_config

SIZE = (64, 48)
MISSING_DEVICE = 97


def colour(i: int) -> tuple[int, int, int]:
    """A distinct BGR colour per frame, different in every channel."""
    return (20 + 20 * i, 120, 230 - 15 * i)


def write_video(path, frames=10, fps=10.0):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, SIZE)
    assert writer.isOpened()
    for i in range(frames):
        writer.write(np.full((SIZE[1], SIZE[0], 3), colour(i), np.uint8))
    writer.release()


def test_a_video_file_is_read_frame_by_frame_in_bgr_with_its_times(tmp_path):
    path = tmp_path / "game.avi"
    write_video(path)
    with VideoFile(path) as camera:
        frames = [camera.read() for _ in range(10)]
        assert camera.status.ok and camera.status.line == ""
        ok, frame, _ = camera.read()
        assert not ok and frame is None and camera.status.state == ENDED
        assert "end of the recording" in camera.status.message
        assert camera.status.line == "recording ended"
    for i, (ok, frame, t) in enumerate(frames):
        assert ok and frame.shape == (SIZE[1], SIZE[0], 3) and frame.dtype == np.uint8
        assert np.abs(frame.reshape(-1, 3).mean(axis=0) - colour(i)).max() < 6  # JPEG is lossy
        assert t == pytest.approx(i / 10.0)


def test_a_folder_of_images_is_read_in_name_order(tmp_path):
    images = {}
    for i in (3, 0, 2, 1):
        image = np.random.default_rng(i).integers(0, 256, (SIZE[1], SIZE[0], 3), np.uint8)
        cv2.imwrite(str(tmp_path / f"board_{i:03d}.png"), image)
        images[i] = image
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "board_001b.png").write_bytes(b"not a png either")
    with ImageFolder(tmp_path, fps=4.0) as camera:
        read = [camera.read() for _ in range(4)]
        assert camera.read()[0] is False and camera.status.state == ENDED
    assert [name.name for name in camera.skipped] == ["board_001b.png"]
    for i, (ok, frame, t) in enumerate(read):
        assert ok and np.array_equal(frame, images[i]) and t == i / 4.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: VideoFile(p / "none.avi"), "video file not found"),
        (lambda p: ImageFolder(p / "none"), "image folder not found"),
        (lambda p: ImageFolder(p), "no images"),
    ],
)
def test_missing_recordings_are_configuration_errors(tmp_path, make, message):
    with pytest.raises(CameraError, match=message):
        make(tmp_path)


def test_a_file_opencv_cannot_decode_is_an_error(tmp_path):
    path = tmp_path / "broken.avi"
    path.write_bytes(b"\x00" * 1000)
    with pytest.raises(CameraError, match="cannot decode video"):
        VideoFile(path)


def test_a_missing_camera_reports_and_keeps_trying_without_raising():
    with LiveCapture(MISSING_DEVICE, SIZE, retry_seconds=0) as camera:
        assert camera.status.state == LOST
        assert f"camera {MISSING_DEVICE} (/dev/video{MISSING_DEVICE}) not found" in (
            camera.status.message
        )
        assert "reconnecting" in camera.status.message
        for attempt in range(1, 4):
            ok, frame, t = camera.read()
            assert (ok, frame) == (False, None) and t > 0
            assert camera.status.attempts == attempt
        assert not camera.reconnect() and camera.status.attempts == 4
        assert camera.status.line == "camera lost, retry 4"
    board = screens.scoreboard({"white": 0, "black": 0}, "white", status=camera.status.line)
    assert "camera lost, retry 4" in board.text.splitlines()  # short enough to show whole


def test_retries_wait_retry_seconds():
    with LiveCapture(MISSING_DEVICE, retry_seconds=3600) as camera:
        camera.read()
        camera.read()
        assert camera.status.attempts == 0  # the next attempt is an hour away


def test_a_camera_that_comes_back_is_reconnected_by_read(tmp_path):
    stream = tmp_path / "stream.avi"  # a stream URL or device that is not there yet
    with LiveCapture(str(stream), retry_seconds=0) as camera:
        assert camera.read()[0] is False and camera.status.state == LOST
        write_video(stream, frames=3)  # plugged in
        ok, frame, _ = camera.read()
        assert ok and frame.shape == (SIZE[1], SIZE[0], 3)
        assert camera.status.ok and camera.status.attempts >= 1
        assert camera.read()[0] and camera.read()[0]
        assert camera.read()[0] is False and camera.status.state == LOST
        assert "stopped sending frames" in camera.status.message
        assert camera.read()[0]  # a live source is reopened, not ended


def test_without_picamera2_the_pi_camera_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # what `import picamera2` meets off the Pi
    with pytest.raises(CameraError) as error:
        PiCamera()
    assert str(error.value) == PICAMERA2_MISSING
    assert PICAMERA2_MISSING == "picamera2 is not installed (it needs libcamera, Raspberry Pi only)"


def test_importing_the_camera_module_does_not_import_picamera2():
    code = "import sys, firmware.camera; print('picamera2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_configuration_chooses_the_source(tmp_path):
    write_video(tmp_path / "v.avi", frames=2)
    cv2.imwrite(str(tmp_path / "still.png"), np.zeros((8, 8, 3), np.uint8))
    camera = load_config().camera
    with open_camera(replace(camera, source="file", path=str(tmp_path / "v.avi"))) as source:
        assert isinstance(source, VideoFile)
    with open_camera(replace(camera, source="folder", path=str(tmp_path))) as source:
        assert isinstance(source, ImageFolder) and len(source.files) == 1
    with open_camera(replace(camera, source="device", device=MISSING_DEVICE)) as source:
        assert isinstance(source, LiveCapture) and source.size == camera.resolution
