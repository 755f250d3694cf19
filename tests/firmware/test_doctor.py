"""``referee doctor``: each check's lines, above all its failure paths, never a traceback."""

import errno
import threading
from dataclasses import replace
from types import SimpleNamespace

import pytest
import smbus2
from gpiozero.pins.mock import MockFactory

from firmware import doctor
from firmware.cli import main
from firmware.config import load_config
from firmware.doctor import FIX, OK, SKIP, Doctor
from tests.firmware.test_display import SilentBus


@pytest.fixture
def config():
    return load_config()


def lines(check, *args, **kwargs):
    said = []
    check(lambda state, text: said.append((state, text)), *args, **kwargs)
    return said


class Bus(SilentBus):
    """A bus on which devices answer at ``addresses``."""

    def __init__(self, *addresses):
        self.addresses = set(addresses)

    def _probe(self, address, *args):
        if address not in self.addresses:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")

    write_quick = read_byte = _probe


def test_i2c_scan_names_the_oled_that_answers(config):
    said = lines(doctor.check_i2c_bus, config, open_bus=lambda port: Bus(0x3C, 0x50))
    assert said == [(OK, "I2C bus 1: 0x3c (an SSD1306/SH1106 OLED), 0x50 (unknown device)")]


def test_i2c_an_oled_at_the_other_address_is_named_with_the_key_to_set(config):
    [(state, text)] = lines(doctor.check_i2c_bus, config, open_bus=lambda port: Bus(0x3D))
    assert state == FIX and text.endswith("nothing at 0x3c: set [display] i2c_address = 0x3d")


def test_i2c_nothing_answers(config):
    [(state, text)] = lines(doctor.check_i2c_bus, config, open_bus=SilentBus)
    assert state == FIX and "nothing answers" in text and "SDA to GPIO 2" in text


@pytest.mark.parametrize(
    ("error", "fix"),
    [(errno.ENOENT, "sudo raspi-config nonint do_i2c 0"), (errno.EACCES, "i2c group")],
)
def test_i2c_bus_missing_or_forbidden(config, error, fix):
    def open_bus(port):
        raise OSError(error, "no", f"/dev/i2c-{port}")

    [(state, text)] = lines(doctor.check_i2c_bus, config, open_bus=open_bus)
    assert state == FIX and fix in text


def test_a_display_that_never_answers(config, monkeypatch):
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)
    [(state, text)] = lines(doctor.check_display, config)
    assert state == FIX and "no ssd1306 answers at I2C address 0x3c" in text


def test_each_button_is_asked_for_and_confirmed(config):
    factory = MockFactory()

    def press_soon(text):  # the player presses CONFIRM and UNDO; MENU is broken
        for name, pin in (("CONFIRM", 17), ("UNDO", 27)):
            if f"press {name} " in text:
                threading.Timer(0.05, factory.pin(pin).drive_low).start()
                threading.Timer(0.10, factory.pin(pin).drive_high).start()

    said = lines(doctor.check_buttons, config, press_seconds=0.5, pin_factory=factory,
                 prompt=press_soon)  # fmt: skip
    assert [state for state, _ in said] == [OK, OK, FIX]
    assert said[2][1].startswith("button MENU (GPIO 22): no press in 0.5 s")
    factory.reset()


def test_buttons_without_gpio_and_without_pressing(config):
    [(state, text)] = lines(doctor.check_buttons, config, pin_factory=object())
    assert state == FIX and text.startswith("buttons: no GPIO")
    factory = MockFactory()
    [(state, text)] = lines(doctor.check_buttons, config, press_seconds=0, pin_factory=factory)
    assert state == SKIP and "--press-seconds" in text
    factory.reset()


def test_a_user_outside_the_groups_is_told_the_command(monkeypatch):
    said = lines(doctor.check_groups, users=["nobody"])
    assert said and all(state == FIX for state, _ in said)
    assert any("usermod -aG" in text or "do not exist" in text for _, text in said)


@pytest.mark.parametrize(
    ("stdout", "state", "words"),
    [
        ("throttled=0x0\n", OK, "no under-voltage"),
        ("throttled=0x50005\n", FIX, "under-voltage now, throttled now, under-voltage since boot"),
        ("VCHI initialization failed\n", FIX, "video group"),
    ],
)
def test_power(stdout, state, words):
    def run(argv, **kwargs):
        assert argv == ["vcgencmd", "get_throttled"]
        return SimpleNamespace(stdout=stdout, stderr="")

    [(said_state, text)] = lines(doctor.check_power, run=run)
    assert said_state == state and words in text


def test_power_off_a_pi():
    def run(argv, **kwargs):
        raise FileNotFoundError(argv[0])

    assert lines(doctor.check_power, run=run)[0][0] == SKIP


def test_disk(config, tmp_path, monkeypatch):
    journal = replace(config.journal, directory=tmp_path / "not" / "made" / "yet")
    config = replace(config, journal=journal)
    assert lines(doctor.check_disk, config)[0][0] == OK
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: SimpleNamespace(free=50e6))
    [(state, text)] = lines(doctor.check_disk, config)
    assert state == FIX and "50 MB free" in text
    monkeypatch.setattr(doctor.os, "access", lambda path, mode: False)
    [(state, text)] = lines(doctor.check_disk, config)
    assert state == FIX and "not writable" in text


def test_an_unexpected_error_is_a_line_not_a_traceback():
    said = []
    doc = Doctor(said.append)

    def broken(say):
        raise KeyError("surprise")

    doc.check("power", broken)
    assert said == ["  [!!] power: unexpected KeyError: 'surprise'"] and doc.problems == 1


def test_the_whole_doctor_without_any_hardware_ends_with_a_count(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)
    config = tmp_path / "referee.toml"
    config.write_text(f'[camera]\nsource = "folder"\npath = "{tmp_path}"\n', encoding="utf-8")
    assert main(["doctor", "--config", str(config), "--press-seconds", "0"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "referee doctor" and out[-1].endswith("problem(s) found")
    assert any("[!!] camera: no images" in line for line in out)
    assert any("[!!] I2C bus 1: nothing answers" in line for line in out)
    assert any("[!!] display: no ssd1306 answers" in line for line in out)
    assert all(line.startswith("  [") for line in out[1:-1])
