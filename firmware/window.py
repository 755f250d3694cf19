"""The OLED's screens in a desktop window, and the keyboard as the buttons (a laptop's referee).

:func:`open_window` opens an OpenCV window (``cv2.imshow``); :class:`WindowDevice` is a luma
device that draws every screen in it, magnified, and :class:`WindowKeys` reads the keys pressed
in it as button actions (``firmware.actions.KEYS``: Enter or space = confirm, u or Backspace =
undo, m or Tab = menu, c = choose; q or Esc stops the referee). Where no window can open (no
display, or an OpenCV built without windows, such as ``opencv-python-headless``) the caller falls
back to image files or the console: :func:`window_problem` says why.
"""

from __future__ import annotations

import contextlib
import os
import sys

import cv2
import numpy as np
from luma.core.device import dummy
from PIL import Image

from .actions import Action, action_for_key
from .screens import HEIGHT, WIDTH

#: The window's title.
TITLE = "tabletop-referee"
#: ``cv2.waitKey`` codes of the keys that have no printable character, by ``KEYS`` name.
KEY_CODES = {13: "enter", 10: "enter", 32: "space", 9: "tab", 8: "backspace", 127: "backspace"}
#: Keys that stop the referee (as Ctrl-C does).
QUIT_KEYS = {ord("q"), 27}  # q, Esc


def window_problem() -> str | None:
    """Why no window can be opened here (``None``: it can)."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return "no display to open a window on (DISPLAY is not set)"
    try:
        cv2.namedWindow(TITLE, cv2.WINDOW_AUTOSIZE)
    except cv2.error:
        return (
            "this OpenCV cannot open windows (opencv-python-headless); for a window: "
            "pip uninstall opencv-python-headless && "
            f'pip install "opencv-python=={cv2.__version__}.*"'
        )
    return None


def key_action(code: int) -> Action | None:
    """The action of a ``cv2.waitKey`` code (``-1``: no key); :class:`KeyboardInterrupt` for a
    quit key."""
    if code < 0:
        return None
    code &= 0xFF
    if code in QUIT_KEYS:
        raise KeyboardInterrupt
    return action_for_key(KEY_CODES.get(code, chr(code)))


class WindowKeys:
    """The loop's ``actions``: one ``cv2.waitKey`` per call, which also lets the window redraw."""

    def __call__(self) -> Action | None:
        return key_action(cv2.waitKey(1))


class WindowDevice(dummy):
    """A luma device showing each image in the window, ``scale`` times the OLED's size."""

    def __init__(self, scale: int = 4, rotate: int = 0) -> None:
        super().__init__(width=WIDTH, height=HEIGHT, rotate=rotate, mode="1")
        self.scale = scale

    def display(self, image: Image.Image) -> None:
        """Show ``image`` (what the OLED would light) in the window."""
        super().display(image)
        pixels = np.asarray(self.image.convert("L"))
        big = cv2.resize(
            pixels, None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_NEAREST
        )
        cv2.imshow(TITLE, big)

    def cleanup(self) -> None:
        """Close the window (again, or at exit: nothing)."""
        with contextlib.suppress(cv2.error):
            cv2.destroyWindow(TITLE)
