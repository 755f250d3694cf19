"""The OLED: a luma device chosen by configuration, and :class:`Display`, which shows screens.

On the Pi the device is an SSD1306 or SH1106 128x64 OLED on I2C (``luma.oled``). Off the Pi
the same screens go to luma's stand-ins: ``dummy`` (keeps the last image in ``device.image``),
``capture`` (one PNG per screen) or ``gifanim`` (an animated GIF, written on :meth:`close`)::

    display = Display(make_device(config.display))
    display.show(screens.scoreboard(game.scores, game.to_move))
    ...
    display.tick()   # in the loop: flashes a blinking screen (ILLEGAL)

An OLED that is missing, at another address or unplugged later is no reason to stop refereeing:
:func:`make_device` raises :class:`DisplayError` saying what to check, and ``Display(None)`` (or a
display whose device stops answering) keeps the screens without drawing them, so that the log
and the buttons go on working.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable
from typing import Any

from luma.core.error import Error as LumaError
from PIL import Image

from vision.native import import_uninterrupted

from .config import DisplayConfig
from .screens import HEIGHT, WIDTH, Screen, inverted

#: The addresses an SSD1306 or SH1106 OLED answers at (set by a jumper or a resistor on its board).
OLED_ADDRESSES = (0x3C, 0x3D)
#: File names of the emulated displays' output, in ``[display] output``.
CAPTURE_FILES = "screen_{0:05d}.png"
GIF_FILE = "screens.gif"


class DisplayError(RuntimeError):
    """The display cannot be opened; the message says what to check."""


def make_device(config: DisplayConfig, serial_interface: Any = None) -> Any:
    """The luma device of the ``[display]`` section, switched to its configured contrast.

    ``serial_interface`` replaces the I2C bus of an OLED driver (luma's own
    ``luma.core.interface.serial.noop`` drives one with no hardware)."""
    if config.driver in ("ssd1306", "sh1106"):
        from luma.oled.device import sh1106, ssd1306

        driver = ssd1306 if config.driver == "ssd1306" else sh1106
        serial = serial_interface if serial_interface is not None else _i2c(config)
        try:
            device = driver(serial, width=WIDTH, height=HEIGHT, rotate=config.rotate)
        except (OSError, LumaError) as exc:  # luma turns a silent bus into DeviceNotFoundError
            others = " or ".join(f"{a:#04x}" for a in OLED_ADDRESSES if a != config.i2c_address)
            raise DisplayError(
                f"no {config.driver} answers at I2C address {config.i2c_address:#04x} on bus "
                f"{config.i2c_port} ({exc}); check the wiring (SDA to GPIO 2, SCL to GPIO 3, "
                f"VCC, GND), see what answers with `i2cdetect -y {config.i2c_port}`, and set "
                f"[display] i2c_address = {others or '0x3C'} if the OLED answers there"
            ) from None
    elif config.driver == "window":
        from .window import WindowDevice

        device = WindowDevice(config.scale, config.rotate)
    elif config.driver == "dummy":
        from luma.core.device import dummy

        device = dummy(width=WIDTH, height=HEIGHT, rotate=config.rotate, mode="1")
    else:
        device = _emulator(config)
    device.contrast(config.contrast)
    return device


def _i2c(config: DisplayConfig) -> Any:
    from luma.core.error import DeviceAddressError, DeviceNotFoundError, DevicePermissionError
    from luma.core.interface.serial import i2c

    try:
        return i2c(port=config.i2c_port, address=config.i2c_address)
    except (DeviceNotFoundError, DevicePermissionError, DeviceAddressError) as exc:
        raise DisplayError(
            f"cannot open I2C bus {config.i2c_port} for the {config.driver} OLED: {exc}; "
            "enable I2C (sudo raspi-config nonint do_i2c 0, then reboot) and add the user to the "
            "i2c group"
        ) from None


def _emulator(config: DisplayConfig) -> Any:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # luma.emulator imports pygame
    try:
        import_uninterrupted("pygame")  # its native modules, which the emulator's devices use
        emulator = import_uninterrupted("luma.emulator.device")
    except ImportError:
        raise DisplayError(
            f"display driver {config.driver!r} needs luma.emulator: pip install luma.emulator"
        ) from None
    config.output.mkdir(parents=True, exist_ok=True)
    options = {
        "width": WIDTH,
        "height": HEIGHT,
        "rotate": config.rotate,
        "mode": "1",
        "transform": "identity" if config.scale > 1 else "none",
        "scale": config.scale,
    }
    if config.driver == "capture":
        return emulator.capture(file_template=str(config.output / CAPTURE_FILES), **options)
    return emulator.gifanim(
        filename=str(config.output / GIF_FILE), duration=config.frame_seconds, **options
    )


def _same(a: Screen, b: Screen) -> bool:
    return a.blink == b.blink and a.image.tobytes() == b.image.tobytes()


class Display:
    """Shows :class:`~firmware.screens.Screen` s on a luma device.

    A blinking screen alternates with its negative every ``blink_seconds`` as long as the loop
    calls :meth:`tick`; any other screen is drawn once, by :meth:`show`. Showing the screen that
    is already shown does nothing, so the loop may show its screen on every turn: the I2C bus
    (about 0.1 s a frame at 100 kHz, computed from 1 KiB at 9 clock cycles a byte) only carries
    changes.

    ``device`` ``None`` is a referee without a screen: screens are kept (:attr:`screen`) but not
    drawn. A device that fails while drawing (an OLED unplugged, a loose wire) is dropped the
    same way, once: ``on_lost`` receives the reason (the appliance logs it).
    """

    def __init__(
        self,
        device: Any | None,
        *,
        blink_seconds: float = 0.5,
        on_lost: Callable[[str], None] | None = None,
    ) -> None:
        if device is not None and device.size != (WIDTH, HEIGHT):
            raise DisplayError(f"screens are {WIDTH}x{HEIGHT}, the device is {device.size}")
        self.device = device
        self.on_lost = on_lost or (lambda reason: None)
        self.blink_seconds = blink_seconds
        self.screen: Screen | None = None
        self._negative = False
        self._since = 0.0

    def show(self, screen: Screen, now: float | None = None) -> None:
        """Draw ``screen`` now (``now``: the time, default ``time.monotonic()``)."""
        if self.screen is not None and _same(self.screen, screen):
            return
        self.screen = screen
        self._negative = False
        self._since = time.monotonic() if now is None else now
        self._draw(screen.image)

    def tick(self, now: float | None = None) -> None:
        """Flash a blinking screen: swap it with its negative once ``blink_seconds`` passed."""
        if self.screen is None or not self.screen.blink:
            return
        now = time.monotonic() if now is None else now
        if now - self._since >= self.blink_seconds:
            self._negative = not self._negative
            self._since = now
            image = self.screen.image
            self._draw(inverted(image) if self._negative else image)

    @property
    def headless(self) -> bool:
        """True when nothing is drawn (no device, or it stopped answering)."""
        return self.device is None

    def close(self) -> None:
        """Finish with the device; an animated GIF is written now rather than at exit."""
        write = getattr(self.device, "write_animation", None)  # luma.emulator's gifanim
        if write is not None:
            write()
            atexit.unregister(write)

    def __enter__(self) -> Display:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self, image: Image.Image) -> None:
        device = self.device
        if device is None:
            return
        try:
            device.display(image if image.mode == device.mode else image.convert(device.mode))
        except (OSError, LumaError) as exc:  # smbus2's OSError, or luma's DeviceNotFoundError
            self.device = None
            self.on_lost(f"the display stopped answering ({exc}); refereeing on without it")
