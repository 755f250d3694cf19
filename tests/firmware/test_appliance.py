"""``referee run`` on missing hardware: no OLED on the I2C bus (luma's own i2c interface on an
smbus2 bus that never answers), buttons on gpiozero's MockFactory, systemd's notification socket
as a real UNIX datagram socket; and the menu's safe shutdown."""

import io
import socket

import cv2
import pytest
import smbus2
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from firmware.actions import Action, MenuItem
from firmware.appliance import SHUTDOWN_STATUS, cmd_run
from firmware.buttons import Buttons
from firmware.cli import build_parser
from firmware.display import Display
from firmware.loop import RefereeLoop
from tests.firmware.test_display import SilentBus
from vision.synth import render_scene


@pytest.fixture
def table(tmp_path):
    """A configuration with an SSD1306 that is not there, and one photo of an empty board."""
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "view.png"), render_scene("gobblet", {}, 1, hand=False).image)
    config = tmp_path / "referee.toml"
    config.write_text(
        f'[camera]\nsource = "folder"\npath = "{frames}"\n'
        '[display]\ndriver = "ssd1306"\n'
        f'[journal]\ndirectory = "{tmp_path / "journal"}"\nrecords = "{tmp_path / "records"}"\n',
        encoding="utf-8",
    )
    return config


@pytest.fixture
def mock_pins(monkeypatch):
    factory = MockFactory()
    monkeypatch.setattr(Device, "pin_factory", factory)
    yield factory
    factory.reset()


def run(config):
    """``referee run --config CONFIG --fps 1000``, its arguments as the real parser makes them."""
    return cmd_run(build_parser().parse_args(["run", "--config", str(config), "--fps", "1000"]))


def test_run_referees_without_an_oled_and_says_so_once(table, mock_pins, monkeypatch, capsys):
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)  # luma opens the bus itself and gets no ack
    assert run(table) == 0
    out = capsys.readouterr().out.splitlines()
    said = [line for line in out if line.startswith("referee: no screen")]
    assert len(said) == 1 and "no ssd1306 answers at I2C address 0x3c" in said[0]
    assert "refereeing on without it" in said[0]
    assert "referee: buttons on GPIO 17, 27, 22" in out
    assert "[check board] board found: gobblet" in out  # the loop ran and refereed the frame


def test_run_tells_systemd_it_is_ready_and_pings_the_watchdog(
    table, mock_pins, monkeypatch, tmp_path
):
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(path)
        server.settimeout(2.0)
        monkeypatch.setenv("NOTIFY_SOCKET", path)
        monkeypatch.setenv("WATCHDOG_USEC", "30000000")
        monkeypatch.delenv("WATCHDOG_PID", raising=False)
        assert run(table) == 0
        messages = [server.recv(4096).decode() for _ in range(3)]
    assert messages[0].startswith("READY=1\nSTATUS=refereeing")
    assert messages[1:] == ["WATCHDOG=1", "STOPPING=1"]


def test_buttons_still_work_without_a_screen(mock_pins, tmp_path):
    buttons = Buttons(17, 27, 22, hold_time=0.3, pin_factory=mock_pins)
    loop = RefereeLoop(
        _NoFrames(), Display(None), game="gobblet", journal_dir=tmp_path, actions=buttons.read,
        records_dir=tmp_path / "records",
    )  # fmt: skip
    mock_pins.pin(22).drive_low()
    mock_pins.pin(22).drive_high()  # a short press of MENU
    assert buttons.read(timeout=2.0) is Action.MENU
    loop.press(Action.MENU)
    assert loop.menu.is_open and "pass" in loop.display.screen.text
    buttons.close()
    loop.close()


class _NoFrames:
    status = None

    def read(self):
        return False, None, 0.0


def test_shut_down_from_the_menu_asks_first_then_stops_the_loop(tmp_path):
    loop = RefereeLoop(
        _NoFrames(), Display(None), game="gobblet", journal_dir=tmp_path,
        records_dir=tmp_path / "records",
    )  # fmt: skip
    to_shutdown = list(MenuItem).index(MenuItem.SHUTDOWN) + 1
    for _ in range(to_shutdown):
        loop.press(Action.MENU)
    loop.press(Action.CHOOSE)
    assert "Shut down?" in loop.display.screen.text and not loop.shutdown_requested
    loop.press(Action.UNDO)  # no: the game goes on
    assert not loop.shutdown_requested and "Shut down?" not in loop.display.screen.text
    for _ in range(to_shutdown):
        loop.press(Action.MENU)
    loop.press(Action.CHOOSE)
    loop.press(Action.CONFIRM)
    assert loop.shutdown_requested and "SHUTTING DOWN" in loop.display.screen.text
    loop.run(fps=1000.0)  # returns at once
    loop.close()


def test_run_exits_with_the_shutdown_status_the_unit_powers_off_on(
    table, monkeypatch, capsys, tmp_path
):
    """Keys stand in for the buttons (no GPIO here): MENU to "shut down", CHOOSE, CONFIRM."""
    frame = cv2.imread(str(tmp_path / "frames" / "view.png"))
    for i in range(1, 12):  # frames enough for the keys to arrive while the loop runs
        cv2.imwrite(str(tmp_path / "frames" / f"view{i:02d}.png"), frame)
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)
    steps = list(MenuItem).index(MenuItem.SHUTDOWN) + 1
    monkeypatch.setattr("sys.stdin", io.StringIO("m\n" * steps + "c\n\n"))
    assert run(table) == SHUTDOWN_STATUS
    out = capsys.readouterr().out
    assert "shut down confirmed" in out and "referee: shutting down" in out
