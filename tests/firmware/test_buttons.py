"""Buttons, buzzer and LED on gpiozero's own mock pins (MockFactory), as wired on the Pi."""

import time

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware.actions import Action, Menu
from firmware.buttons import BEEPS, Alarm, Buttons
from firmware.config import load_config

CONFIRM, UNDO, MENU = 17, 27, 22
HOLD = 0.3


@pytest.fixture
def factory():
    factory = MockFactory()
    yield factory
    factory.reset()


@pytest.fixture
def buttons(factory):
    with Buttons(CONFIRM, UNDO, MENU, hold_time=HOLD, pin_factory=factory) as buttons:
        yield buttons


def press(factory, pin, seconds=0.0):
    factory.pin(pin).drive_low()  # a button shorts its pin to ground
    time.sleep(seconds)
    factory.pin(pin).drive_high()


def wait_for_states(pin, count, timeout=3.0):
    deadline = time.monotonic() + timeout
    while len(pin.states) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return [state.state for state in pin.states]


def test_pins_are_pulled_up_and_debounced(factory, buttons):
    for pin in (CONFIRM, UNDO, MENU):
        assert factory.pin(pin).pull == "up"
        assert factory.pin(pin).bounce == pytest.approx(0.05)
    assert buttons.read() is None


def test_confirm_and_undo_act_when_pressed(factory, buttons):
    factory.pin(CONFIRM).drive_low()
    assert buttons.read(timeout=1) is Action.CONFIRM
    factory.pin(CONFIRM).drive_high()
    press(factory, UNDO)
    press(factory, CONFIRM)
    assert [buttons.read(timeout=1), buttons.read(timeout=1)] == [Action.UNDO, Action.CONFIRM]
    assert buttons.read(timeout=0.1) is None


def test_a_short_menu_press_is_menu_on_release(factory, buttons):
    factory.pin(MENU).drive_low()
    assert buttons.read(timeout=0.05) is None  # nothing until the button is let go
    factory.pin(MENU).drive_high()
    assert buttons.read(timeout=1) is Action.MENU
    assert buttons.read(timeout=HOLD + 0.2) is None


def test_holding_menu_chooses_once_and_the_release_adds_nothing(factory, buttons):
    factory.pin(MENU).drive_low()
    started = time.monotonic()
    assert buttons.read(timeout=3) is Action.CHOOSE
    assert time.monotonic() - started >= HOLD * 0.9
    time.sleep(HOLD * 1.5)  # still held: no second CHOOSE
    factory.pin(MENU).drive_high()
    assert buttons.read(timeout=0.2) is None


def test_the_buttons_walk_the_menu(factory, buttons):
    menu = Menu.main()
    press(factory, MENU)  # open on "pass"
    press(factory, MENU)  # "exchange"
    press(factory, MENU)  # "end of game"
    press(factory, MENU, seconds=HOLD * 2)  # hold: choose
    chosen = [menu.handle(buttons.read(timeout=3)) for _ in range(4)]
    assert chosen == [None, None, None, "end of game"]
    assert not menu.is_open


def test_buttons_from_the_configuration(factory):
    config = load_config().buttons
    with Buttons.from_config(config, pin_factory=factory) as buttons:
        assert buttons.menu.hold_time == config.hold_seconds
        press(factory, config.undo)
        assert buttons.read(timeout=1) is Action.UNDO


def test_an_active_buzzer_beeps_and_the_led_blinks_until_cleared(factory):
    with Alarm(buzzer=18, led=23, pin_factory=factory) as alarm:
        alarm.illegal()
        beeps = wait_for_states(factory.pin(18), 1 + 2 * BEEPS)
        assert beeps == [False] + [True, False] * BEEPS
        led = wait_for_states(factory.pin(23), 3)
        assert led[:3] == [False, True, False]  # blinking
        alarm.clear()
        time.sleep(0.3)
        assert factory.pin(23).state is False and factory.pin(18).state is False


def test_a_tonal_buzzer_plays_beeps_by_pwm():
    factory = MockFactory(pin_class=MockPWMPin)
    with Alarm(buzzer=18, tonal=True, pin_factory=factory) as alarm:
        assert alarm.led is None
        alarm.illegal()
        states = wait_for_states(factory.pin(18), 1 + 2 * BEEPS)
        assert states[1:] == [0.5, 0.0] * BEEPS  # square wave on, off
        alarm.clear()
        assert factory.pin(18).frequency is None
    factory.reset()


def test_the_alarm_parts_follow_the_configuration(factory, tmp_path):
    config = load_config()
    off = Alarm.from_config(config.buzzer, config.led, pin_factory=factory)
    assert off.buzzer is None and off.led is None
    off.illegal()  # nothing to sound: no error
    off.clear()
    path = tmp_path / "on.toml"
    path.write_text("[buzzer]\nenabled = true\n[led]\nenabled = true\npin = 24\n")
    on = load_config(path)
    with Alarm.from_config(on.buzzer, on.led, pin_factory=factory) as alarm:
        assert alarm.buzzer.pin.info.name == "GPIO18" and alarm.led.pin.info.name == "GPIO24"
