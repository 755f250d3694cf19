"""A stand-in for picamera2 (which needs libcamera and cannot be installed off a Pi), written from
picamera2's own source (``picamera2/picamera2.py``, ``job.py``, ``controls.py``) for the parts
:class:`firmware.camera.PiCamera` uses, failing the way the real one fails:

- ``Picamera2(n)`` raises ``IndexError`` when no camera is connected (it looks ``n`` up in the
  list of cameras libcamera found);
- ``capture_array(name, wait=None)`` with the cable out waits for ever (a ``Future`` that never
  completes): here that is an ``AssertionError`` instead of a hung test; with ``wait=seconds``
  the job's ``future.result(timeout)`` raises ``TimeoutError`` after that time (on the
  :class:`Rig`'s clock, not a real wait);
- ``set_controls`` and ``controls=`` refuse a control the camera does not advertise
  (``RuntimeError("Control X is not advertised by libcamera")``).

:class:`Rig` is the bench: the frames the sensor delivers, whether the cable is in, a clock, and
a log of what the referee asked of the camera. ``rig.module()`` goes into ``sys.modules``.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

#: The controls of a Camera Module 3 (imx708) as libcamera advertises them (a subset).
CAMERA_MODULE_3 = (
    "AeEnable", "AwbEnable", "ExposureTime", "AnalogueGain", "ColourGains", "AfMode",
    "AfTrigger", "LensPosition", "AeFlickerMode", "AeFlickerPeriod", "FrameDurationLimits",
    "AeConstraintMode",
)  # fmt: skip
#: A fixed-focus camera (Camera Module 2, imx219): no autofocus controls.
CAMERA_MODULE_2 = tuple(c for c in CAMERA_MODULE_3 if not c.startswith(("Af", "Lens")))


class Rig:
    """The camera's world: ``frame`` is what the sensor sees, ``plugged`` the cable."""

    def __init__(self, frame: np.ndarray, *, controls: tuple[str, ...] = CAMERA_MODULE_3) -> None:
        self.frame = frame
        self.plugged = True
        self.now = 100.0
        self.frame_seconds = 0.1
        self.advertised = controls
        self.autofocus_succeeds = True
        self.metadata = {"ExposureTime": 12000, "AnalogueGain": 2.5, "ColourGains": (1.8, 1.4)}
        self.opened = 0
        self.flushed = 0
        self.configs: list[dict[str, Any]] = []
        self.controls: dict[str, Any] = {}  # every control set, last value wins
        self.autofocus_cycles = 0

    def clock(self) -> float:
        return self.now

    def module(self) -> types.ModuleType:
        rig = self

        class Picamera2(_Picamera2):
            def __init__(self, camera_num: int = 0) -> None:
                super().__init__(rig, camera_num)

        module = types.ModuleType("picamera2")
        module.Picamera2 = Picamera2
        return module


class _Picamera2:
    def __init__(self, rig: Rig, camera_num: int) -> None:
        if not rig.plugged or camera_num != 0:
            raise IndexError("list index out of range")  # Picamera2.global_camera_info()[n]
        self.rig = rig
        rig.opened += 1
        self.camera_controls = {name: (0, 0, None) for name in rig.advertised}
        self.started = False

    def create_video_configuration(
        self, main: dict | None = None, sensor: dict | None = None, controls: dict | None = None
    ) -> dict[str, Any]:
        return {"main": dict(main or {}), "sensor": dict(sensor or {}), "controls": controls or {}}

    def configure(self, config: dict[str, Any]) -> None:
        self._check(config["controls"])
        self.rig.configs.append(config)
        self.rig.controls.update(config["controls"])

    def start(self) -> None:
        self.started = True

    def set_controls(self, controls: dict[str, Any]) -> None:
        self._check(controls)
        self.rig.controls.update(controls)

    def _check(self, controls: dict[str, Any]) -> None:
        for name in controls:
            if name not in self.camera_controls:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")

    def _wait_for_frame(self, wait: Any) -> None:
        if self.rig.plugged:
            self.rig.now += self.rig.frame_seconds
            return
        if wait is None or wait is True:
            raise AssertionError("capture without wait=: picamera2 would wait for ever")
        self.rig.now += wait
        raise TimeoutError  # concurrent.futures.TimeoutError is TimeoutError since Python 3.11

    def capture_array(self, name: str = "main", wait: Any = None) -> np.ndarray:
        self._wait_for_frame(wait)
        size = self.rig.configs[-1]["main"]["size"]
        assert self.rig.frame.shape[1::-1] == tuple(size), "the rig's frame has the asked size"
        return self.rig.frame.copy()

    def capture_metadata(self, wait: Any = None) -> dict[str, Any]:
        self._wait_for_frame(wait)
        return dict(self.rig.metadata)

    def autofocus_cycle(self, wait: Any = None) -> bool:
        self._check({"AfMode": 1, "AfTrigger": 0})
        self._wait_for_frame(wait)
        self.rig.autofocus_cycles += 1
        self.rig.controls["AfMode"] = 1
        return self.rig.autofocus_succeeds

    def cancel_all_and_flush(self) -> None:
        self.rig.flushed += 1

    def close(self) -> None:
        self.started = False
