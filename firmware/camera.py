"""Camera sources behind one small interface: ``read() -> (ok, frame, t)``, ``close()``.

``frame`` is a BGR ``uint8`` array (what OpenCV uses), ``t`` the capture time in seconds. Sources:

- :class:`PiCamera`: the Raspberry Pi camera module, through picamera2 (imported when opened);
- :class:`LiveCapture`: an OpenCV ``VideoCapture`` device index (USB webcam) or stream URL;
- :class:`VideoFile`: a recorded video; :class:`ImageFolder`: still images in name order.

A live source never raises once open: when the camera is unplugged or stops answering, ``read``
returns ``ok=False``, :attr:`Camera.status` says so, and every later ``read`` retries (at most
every ``retry_seconds``) until the camera is back, so the caller's game goes on meanwhile.
A recording that ends is ``ended``, not lost. Configuration mistakes (a missing file, picamera2
not installed) raise :class:`CameraError` at once. A Pi camera whose cable is bumped does not
fail: its frames stop coming, so :class:`PiCamera` waits ``frame_timeout`` seconds at most for
each one and then treats the camera as lost.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .config import CameraConfig

#: What :meth:`Camera.read` returns: (a frame was read, the BGR frame or None, time in seconds).
Frame = tuple[bool, np.ndarray | None, float]

OK, LOST, ENDED = "ok", "lost", "ended"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
PICAMERA2_MISSING = "picamera2 is not installed (it needs libcamera, Raspberry Pi only)"
#: libcamera's ``AeConstraintMode`` values (``control_ids_core.yaml``): what auto exposure keeps
#: from clipping. The Pi's tuning files give ``highlight`` an upper bound on the brightest 2 %
#: of the picture (0.8 of full scale) beside ``normal``'s lower one.
AE_CONSTRAINT_MODES = {"normal": 0, "highlight": 1, "shadows": 2}


class CameraError(RuntimeError):
    """A camera source that cannot work as configured (not a camera that was unplugged)."""


class CameraLost(Exception):
    """Raised by a source's ``_open``/``_grab`` when the camera is not (or no longer) there."""


@dataclass(frozen=True)
class CameraStatus:
    """``state`` is ``ok``, ``lost`` (reconnecting) or ``ended``; ``message`` says why (for the
    log), :attr:`line` in a few words (for the screen); ``attempts`` counts reconnections."""

    state: str = OK
    message: str = ""
    attempts: int = 0

    @property
    def ok(self) -> bool:
        """True while frames come in."""
        return self.state == OK

    @property
    def line(self) -> str:
        """A few words for the screen's status line (``""`` while all is well)."""
        if self.state == LOST:
            return f"camera lost, retry {self.attempts}" if self.attempts else "camera lost"
        return "recording ended" if self.state == ENDED else ""


class Camera(ABC):
    """A frame source; subclasses open, grab and release, this class handles losses."""

    name = "camera"

    def __init__(
        self, *, retry_seconds: float = 2.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.retry_seconds = retry_seconds
        self.clock = clock
        self.status = CameraStatus()
        self._next_try = 0.0
        self._connect(attempts=0)

    def read(self) -> Frame:
        """The next frame; ``(False, None, t)`` while the camera is lost or the source ended."""
        if self.status.state == LOST and self.clock() >= self._next_try:
            self.reconnect()
        if self.status.state != OK:
            return False, None, self.clock()
        try:
            frame, t = self._grab()
        except CameraLost as exc:
            self._lose(str(exc), self.status.attempts)
            return False, None, self.clock()
        if frame is None:
            self.status = CameraStatus(ENDED, f"{self.name}: end of the recording")
            return False, None, t
        return True, frame, t

    @property
    def notes(self) -> tuple[str, ...]:
        """What the camera set itself up to do (focus, exposure), for ``referee doctor``;
        none for a plain source."""
        return ()

    def reconnect(self) -> bool:
        """Close and reopen the camera now; True when it answers again."""
        self._release()
        return self._connect(self.status.attempts + 1)

    def close(self) -> None:
        """Release the camera."""
        self._release()

    def __enter__(self) -> Camera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self, attempts: int) -> bool:
        try:
            self._open()
        except CameraLost as exc:
            self._lose(str(exc), attempts)
            return False
        self.status = CameraStatus(OK, "", attempts)
        return True

    def _lose(self, reason: str, attempts: int) -> None:
        self._release()
        retry = f", reconnecting (attempt {attempts + 1})" if attempts else ", reconnecting"
        self.status = CameraStatus(LOST, f"{reason}{retry}", attempts)
        self._next_try = self.clock() + self.retry_seconds

    @abstractmethod
    def _open(self) -> None:
        """Open the camera; raise :class:`CameraLost` if it is not there."""

    @abstractmethod
    def _grab(self) -> tuple[np.ndarray | None, float]:
        """The next frame and its time (``None`` at the end of a recording)."""

    @abstractmethod
    def _release(self) -> None:
        """Let go of the camera (safe to call twice)."""


class PiCamera(Camera):
    """The Raspberry Pi camera module through picamera2, in the video configuration.

    ``create_video_configuration(main={"size": size, "format": "RGB888"})``: picamera2's RGB888
    lays each pixel out as B, G, R, so ``capture_array()`` is already in OpenCV's BGR order.

    - ``sensor_size``: the sensor mode asked for (``sensor={"output_size": ...}``). Left to
      itself picamera2 picks the mode nearest the output size, which for 1280x960 on the Camera
      Module 3 is its 1536x864 mode: a crop of the sensor's centre, scaled up. 2304x1296 is its
      binned mode with the whole field of view.
    - ``frame_timeout``: seconds to wait for a frame (``capture_array(wait=...)``); without it
      picamera2 waits for ever when the cable is bumped. On a timeout the queued requests are
      cancelled (``cancel_all_and_flush``), the camera closed and reopened.
    - ``focus``: ``"manual"`` puts a motorised lens at ``lens_position`` dioptres (1/distance in
      metres); ``"once"`` runs one autofocus cycle after each start (``lens_position`` if it
      fails). Ignored by cameras without autofocus.
    - ``flicker_hz``: the mains frequency of the lamps (50 or 60) that exposure keeps in step
      with (``AeFlickerMode``), 0 for none.
    - ``exposure_constraint``: what auto exposure guards (``AeConstraintMode``, one of
      :data:`AE_CONSTRAINT_MODES`): ``highlight`` keeps the white mat and pale pieces from
      burning out, which ``normal`` (a centre-weighted mean brought to about 0.16 of full scale,
      only a floor on the highlights) allows over a dark table.
    - ``lock_exposure``: :meth:`lock_exposure` (called by the referee loop once the board is
      calibrated) fixes exposure and white balance at their measured values.
    """

    name = "Pi camera"

    def __init__(
        self,
        size: tuple[int, int] = (1280, 960),
        camera_num: int = 0,
        *,
        sensor_size: tuple[int, int] | None = None,
        frame_timeout: float = 5.0,
        focus: str = "manual",
        lens_position: float = 1.8,
        flicker_hz: int = 0,
        exposure_constraint: str = "highlight",
        lock_exposure: bool = True,
        **options: Any,
    ) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise CameraError(PICAMERA2_MISSING) from None
        self._picamera2 = Picamera2
        self.size = size
        self.camera_num = camera_num
        self.sensor_size = sensor_size
        self.frame_timeout = frame_timeout
        self.focus = focus
        self.lens_position = lens_position
        self.flicker_hz = flicker_hz
        if exposure_constraint not in AE_CONSTRAINT_MODES:
            known = ", ".join(AE_CONSTRAINT_MODES)
            raise CameraError(f"exposure constraint {exposure_constraint!r} is not one of {known}")
        self.exposure_constraint = exposure_constraint
        self.lock = lock_exposure
        #: the exposure and colour controls fixed by :meth:`lock_exposure` (set again on reopen)
        self.locked: dict[str, Any] = {}
        #: what the last focus did, for ``referee doctor``
        self.focus_note = ""
        #: which exposure constraint the camera took (or that it offers none)
        self.exposure_note = ""
        self._camera: Any = None
        super().__init__(**options)

    def _open(self) -> None:
        try:
            camera = self._picamera2(self.camera_num)
        except (RuntimeError, IndexError) as exc:  # no camera, or it is busy
            raise CameraLost(f"{self.name} {self.camera_num} not available: {exc}") from None
        try:
            config = camera.create_video_configuration(
                main={"size": self.size, "format": "RGB888"},
                sensor={"output_size": self.sensor_size} if self.sensor_size else {},
                controls=self._start_controls(camera.camera_controls),
            )
            camera.configure(config)
            camera.start()
            self._autofocus(camera)
        except (RuntimeError, TimeoutError) as exc:
            with contextlib.suppress(RuntimeError):
                camera.close()
            raise CameraLost(f"{self.name} {self.camera_num} did not start: {exc}") from None
        self._camera = camera

    def _start_controls(self, advertised: dict[str, Any]) -> dict[str, Any]:
        """Exposure constraint, flicker, lens and (after a reconnection) locked exposure: those
        the camera has."""
        constraint = AE_CONSTRAINT_MODES[self.exposure_constraint]
        controls: dict[str, Any] = {"AeConstraintMode": constraint}
        self.exposure_note = (
            f"exposure constraint {self.exposure_constraint}"
            if "AeConstraintMode" in advertised
            else "no exposure constraint on this camera"
        )
        if self.flicker_hz:
            # FlickerManual (1); the light flickers at twice the mains frequency
            controls |= {"AeFlickerMode": 1, "AeFlickerPeriod": round(1e6 / (2 * self.flicker_hz))}
        if self.focus == "manual":
            controls |= {"AfMode": 0, "LensPosition": self.lens_position}  # AfModeManual
        controls |= self.locked
        return {name: value for name, value in controls.items() if name in advertised}

    @property
    def notes(self) -> tuple[str, ...]:
        """The last focus's note and the exposure constraint taken."""
        return tuple(note for note in (self.focus_note, self.exposure_note) if note)

    def _autofocus(self, camera: Any) -> None:
        if "AfMode" not in camera.camera_controls:
            self.focus_note = "fixed-focus lens"
        elif self.focus == "manual":
            self.focus_note = f"lens at {self.lens_position:g} dioptres (manual)"
        elif camera.autofocus_cycle(wait=self.frame_timeout):
            self.focus_note = "autofocus cycle focused"
        else:
            camera.set_controls({"AfMode": 0, "LensPosition": self.lens_position})
            self.focus_note = f"autofocus failed: lens at {self.lens_position:g} dioptres"

    def _grab(self) -> tuple[np.ndarray | None, float]:
        try:
            frame = self._camera.capture_array("main", wait=self.frame_timeout)
        except TimeoutError:  # no frame: the cable, or the camera, is gone
            self._camera.cancel_all_and_flush()
            raise CameraLost(
                f"{self.name}: no frame for {self.frame_timeout:g} s (camera cable loose?)"
            ) from None
        except RuntimeError as exc:
            raise CameraLost(f"{self.name} stopped: {exc}") from None
        return frame, self.clock()

    def lock_exposure(self) -> bool:
        """Fix exposure time, gain and colour gains at the values the camera measures now, so
        that colours do not drift with a hand's shadow; True when they are locked."""
        if not self.lock or self.locked or self._camera is None:
            return bool(self.locked)
        try:
            metadata = self._camera.capture_metadata(wait=self.frame_timeout)
        except (TimeoutError, RuntimeError):
            return False
        measured = {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": metadata.get("ExposureTime"),
            "AnalogueGain": metadata.get("AnalogueGain"),
            "ColourGains": metadata.get("ColourGains"),
        }
        advertised = self._camera.camera_controls
        self.locked = {k: v for k, v in measured.items() if v is not None and k in advertised}
        self._camera.set_controls(self.locked)
        return bool(self.locked)

    def _release(self) -> None:
        if self._camera is not None:
            with contextlib.suppress(RuntimeError):  # a camera that vanished cannot close
                self._camera.close()
            self._camera = None


class LiveCapture(Camera):
    """An OpenCV ``VideoCapture`` camera: a device index (0 = /dev/video0) or a stream URL."""

    def __init__(
        self, source: int | str = 0, size: tuple[int, int] | None = None, **options: Any
    ) -> None:
        self.source = source
        self.size = size
        self._capture: cv2.VideoCapture | None = None
        self.name = f"camera {source}" + (
            f" (/dev/video{source})" if isinstance(source, int) else ""
        )
        super().__init__(**options)

    def _open(self) -> None:
        capture = cv2.VideoCapture(self.source)
        if not capture.isOpened():
            capture.release()
            raise CameraLost(f"{self.name} not found (unplugged?)")
        if self.size is not None:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._capture = capture

    def _grab(self) -> tuple[np.ndarray | None, float]:
        assert self._capture is not None
        ok, frame = self._capture.read()
        if not ok:
            raise CameraLost(f"{self.name} stopped sending frames")
        return frame, self.clock()

    def _release(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class VideoFile(Camera):
    """A recorded video, frame by frame; ``t`` is the frame's time in the video."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise CameraError(f"video file not found: {self.path}")
        self.name = f"video {self.path.name}"
        self._capture: cv2.VideoCapture | None = None
        super().__init__()

    def _open(self) -> None:
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            capture.release()
            raise CameraError(f"cannot decode video {self.path} (not a video OpenCV can read?)")
        self._capture = capture

    def _grab(self) -> tuple[np.ndarray | None, float]:
        assert self._capture is not None
        ok, frame = self._capture.read()
        t = self._capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        return (frame if ok else None), t

    def _release(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class ImageFolder(Camera):
    """The images of a folder in name order, as frames ``1 / fps`` seconds apart.

    Files OpenCV cannot read are skipped and listed in :attr:`skipped`."""

    def __init__(self, path: str | Path, fps: float = 2.0) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise CameraError(f"image folder not found: {self.path}")
        self.files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise CameraError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in {self.path}")
        self.name = f"folder {self.path.name}"
        self.fps = fps
        self.skipped: list[Path] = []
        self._next = 0  # index in files
        self._frames = 0  # frames read so far
        super().__init__()

    def _open(self) -> None:
        self._next = self._frames = 0

    def _grab(self) -> tuple[np.ndarray | None, float]:
        t = self._frames / self.fps
        while self._next < len(self.files):
            path = self.files[self._next]
            self._next += 1
            frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if frame is not None:
                self._frames += 1
                return frame, t
            self.skipped.append(path)
        return None, t

    def _release(self) -> None:
        """Nothing to release: each image is read whole."""


def open_camera(config: CameraConfig) -> Camera:
    """The source of the ``[camera]`` configuration section."""
    if config.source == "picamera2":
        return PiCamera(
            config.resolution,
            sensor_size=config.sensor_size if any(config.sensor_size) else None,
            frame_timeout=config.frame_timeout,
            focus=config.focus,
            lens_position=config.lens_position,
            flicker_hz=config.flicker_hz,
            exposure_constraint=config.exposure_constraint,
            lock_exposure=config.lock_exposure,
            retry_seconds=config.retry_seconds,
        )
    if config.source == "device":
        return LiveCapture(config.device, config.resolution, retry_seconds=config.retry_seconds)
    if config.source == "file":
        return VideoFile(config.path)
    if config.source == "synthetic":
        from .scenario import scripted_game
        from .simulator import SimulatedTable

        script = scripted_game(config.synthetic_game, seed=config.seed)
        return SimulatedTable(script, seed=config.seed, fps=config.fps)
    return ImageFolder(config.path, config.fps)
