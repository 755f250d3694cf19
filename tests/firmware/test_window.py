"""``referee run`` on a laptop: the window's keys stand in for the buttons; without a display the
screens go to files instead (no window can open in the test machine, so that is what is run)."""

import argparse

import pytest

from firmware.actions import Action
from firmware.appliance import _laptop, _window_or_fallback
from firmware.config import load_config
from firmware.window import key_action, window_problem


@pytest.mark.parametrize(
    ("code", "action"),
    [
        (13, Action.CONFIRM),  # Enter
        (32, Action.CONFIRM),  # space
        (ord("u"), Action.UNDO),
        (8, Action.UNDO),  # Backspace
        (ord("m"), Action.MENU),
        (9, Action.MENU),  # Tab
        (ord("c"), Action.CHOOSE),
        (ord("U"), Action.UNDO),
        (ord("x"), None),
        (-1, None),  # no key pressed
        (0x10000 | ord("m"), Action.MENU),  # waitKey's modifier bits are ignored
    ],
)
def test_window_keys_are_the_buttons(code, action):
    assert key_action(code) is action


@pytest.mark.parametrize("code", [ord("q"), 27])
def test_q_and_escape_stop_the_referee_as_ctrl_c_does(code):
    with pytest.raises(KeyboardInterrupt):
        key_action(code)


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"simulate": None, "webcam": None, **given})


def test_simulate_and_webcam_need_no_config_file():
    defaults = load_config()
    config = _laptop(defaults, _args(simulate="blokus-duo"))
    assert (config.camera.source, config.camera.synthetic_game) == ("synthetic", "blokus-duo")
    assert config.game.default == "blokus-duo" and config.display.driver == "window"
    assert config.journal.directory == defaults.journal.directory / "simulated"
    assert config.journal.records == defaults.journal.records / "simulated"
    config = _laptop(load_config(), _args(webcam=1))
    assert (config.camera.source, config.camera.device) == ("device", 1)
    assert config.display.driver == "window"
    assert _laptop(load_config(), _args()) == load_config()  # the Pi's configuration as it was


def test_without_a_display_the_window_falls_back_to_image_files(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert window_problem() == "no display to open a window on (DISPLAY is not set)"
    config, note = _window_or_fallback(_laptop(load_config(), _args(simulate="gobblet")))
    assert config.display.driver == "capture"  # luma.emulator is a dev dependency
    assert note.startswith("no display to open a window on") and "PNG files" in note


def test_an_opencv_without_windows_is_told_with_the_fix(monkeypatch):
    import cv2

    monkeypatch.setenv("DISPLAY", ":0")

    def no_gui(*args: object) -> None:
        raise cv2.error("The function is not implemented")

    monkeypatch.setattr(cv2, "namedWindow", no_gui)
    # the same OpenCV with windows: a version the project was tested with, whatever pip's newest
    assert f'pip install "opencv-python=={cv2.__version__}.*"' in (window_problem() or "")


def test_the_window_shows_each_screen_magnified_pixel_for_pixel(monkeypatch):
    import cv2
    import numpy as np

    from firmware import screens
    from firmware.display import Display
    from firmware.window import TITLE, WindowDevice

    shown = []
    monkeypatch.setattr(cv2, "imshow", lambda title, image: shown.append((title, image)))
    screen = screens.scoreboard({"white": 1, "black": 0}, "black")
    Display(WindowDevice(scale=3)).show(screen)
    ((title, image),) = shown
    oled = np.asarray(screen.image.convert("L"))
    assert title == TITLE and image.shape == (64 * 3, 128 * 3)
    assert np.array_equal(image[::3, ::3], oled) and np.array_equal(image[2::3, 2::3], oled)
