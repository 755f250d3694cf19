"""The display on luma's own stand-in devices: dummy, noop serial, capture PNGs, an animated GIF."""

import errno
from dataclasses import replace

import pytest
import smbus2
from luma.core.device import dummy
from luma.core.interface.serial import i2c, noop
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageChops

from firmware import screens
from firmware.config import load_config
from firmware.display import GIF_FILE, Display, DisplayError, make_device


@pytest.fixture
def config():
    return load_config().display


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("L"), b.convert("L")).getbbox() is None


def test_the_dummy_device_keeps_what_was_shown(config):
    device = make_device(replace(config, driver="dummy"))
    screen = screens.scoreboard({"white": 2, "black": 3}, "black")
    Display(device).show(screen)
    assert device.size == (128, 64) and same(device.image, screen.image)


def test_rotate_2_turns_the_screen_upside_down(config):
    device = make_device(replace(config, driver="dummy", rotate=2))
    screen = screens.last_move("p1", "a1", {"p1": 1})
    Display(device).show(screen)
    assert same(device.image, screen.image.rotate(180))
    assert not same(device.image, screen.image)


def test_an_illegal_screen_flashes_on_tick_and_others_stay(config):
    device = make_device(replace(config, driver="dummy"))
    display = Display(device, blink_seconds=0.5)
    flag = screens.illegal("covered your own piece", ["b2"])
    display.show(flag, now=10.0)
    shown = []
    for now in (10.2, 10.5, 10.7, 11.0, 11.5):
        display.tick(now)
        shown.append(same(device.image, flag.image))
    assert shown == [True, False, False, True, False]
    assert same(device.image, screens.inverted(flag.image))

    calm = screens.hand_over_board()
    display.show(calm, now=12.0)
    display.tick(13.0)
    display.tick(14.0)
    assert same(device.image, calm.image)


@pytest.mark.parametrize(("driver", "kind"), [("ssd1306", ssd1306), ("sh1106", sh1106)])
def test_oled_drivers_on_luma_noop_serial(config, driver, kind):
    device = make_device(replace(config, driver=driver), serial_interface=noop())
    assert isinstance(device, kind) and device.size == (128, 64)
    Display(device).show(screens.board_not_found())  # the 1-bit image goes through the driver


def test_a_missing_i2c_bus_is_a_clear_error(config):
    with pytest.raises(DisplayError, match="cannot open I2C bus 31 for the ssd1306 OLED"):
        make_device(replace(config, driver="ssd1306", i2c_port=31))


def test_a_device_of_another_size_is_refused():
    with pytest.raises(DisplayError, match="128x64"):
        Display(dummy(width=128, height=32))


def test_capture_writes_one_png_per_screen(config, tmp_path):
    device = make_device(replace(config, driver="capture", output=tmp_path, scale=4))
    shown = [
        screens.menu("Choose a game", ["gobblet", "blokus"], 1),
        screens.scoreboard({"orange": 12, "violet": 9}, "orange"),
        screens.game_over("orange", {"orange": 12, "violet": 9}),
    ]
    with Display(device) as display:
        for screen in shown:
            display.show(screen)
    files = sorted(tmp_path.glob("screen_*.png"))
    assert [f.name for f in files] == ["screen_00001.png", "screen_00002.png", "screen_00003.png"]
    for file, screen in zip(files, shown, strict=True):
        with Image.open(file) as png:
            assert png.size == (512, 256)
            assert same(png.resize((128, 64), Image.Resampling.NEAREST), screen.image)


def test_a_screen_already_shown_is_not_sent_again(config, tmp_path):
    device = make_device(replace(config, driver="capture", output=tmp_path, scale=1))
    display = Display(device)
    display.show(screens.scoreboard({"white": 1, "black": 0}, "black"))
    display.show(screens.scoreboard({"white": 1, "black": 0}, "black"))  # redrawn, the same
    display.show(screens.last_move("white", "a1-b2", {}))
    display.show(screens.scoreboard({"white": 1, "black": 0}, "black"))
    assert len(list(tmp_path.glob("screen_*.png"))) == 3


def test_gifanim_records_a_whole_game_as_one_animation(config, tmp_path):
    device = make_device(replace(config, driver="gifanim", output=tmp_path, frame_seconds=0.8))
    with Display(device) as display:
        display.show(screens.menu("Choose a game", ["toy", "gobblet"], 0))
        display.show(screens.scoreboard({"p1": 0, "p2": 0}, "p1"))
        display.show(screens.last_move("p1", "b2", {}))
        display.show(screens.illegal("it is p1's turn", ["c3"]), now=0.0)
        display.tick(0.5)
        display.tick(1.0)
        display.show(screens.scoreboard({"p1": 1, "p2": 0}, "p2"))
        display.show(screens.game_over("p1", {"p1": 1, "p2": 0}))
    with Image.open(tmp_path / GIF_FILE) as gif:
        assert gif.n_frames == 6 + 2  # six screens, and the ILLEGAL flag flashed twice
        assert gif.size == (128 * config.scale, 64 * config.scale)
        assert gif.info["duration"] == 800


class SilentBus:
    """An smbus2-like I2C bus with nothing on it: every write gets no acknowledge, which the
    kernel reports as ``OSError(EREMOTEIO)`` (121), as smbus2 passes it on."""

    def __init__(self, port: int = 1) -> None:
        self.port = port

    def _no_ack(self, *args: object) -> None:
        raise OSError(errno.EREMOTEIO, "Remote I/O error")

    write_i2c_block_data = i2c_rdwr = write_byte_data = write_quick = read_byte = _no_ack

    def close(self) -> None:
        pass


class Unplugged:
    """A bus whose OLED answers until ``unplug``, then stops acknowledging."""

    def __init__(self) -> None:
        self.writes = 0
        self.plugged = True

    def write_i2c_block_data(self, *args: object) -> None:
        if not self.plugged:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        self.writes += 1


def test_an_oled_that_never_answers_is_a_display_error_that_names_the_fix(config):
    # luma's own i2c interface on a silent bus raises luma.core.error.DeviceNotFoundError
    # (not an OSError) from the driver's first command
    serial = i2c(bus=SilentBus(), address=0x3C)
    with pytest.raises(DisplayError) as error:
        make_device(replace(config, driver="sh1106"), serial_interface=serial)
    message = str(error.value)
    assert "no sh1106 answers at I2C address 0x3c on bus 1" in message
    assert "i2c_address = 0x3d" in message and "i2cdetect -y 1" in message
    assert "SDA to GPIO 2" in message


def test_an_oled_at_the_default_address_missing_through_smbus2(config, monkeypatch):
    """The whole path as on the Pi: luma opens smbus2.SMBus(1) itself (managed mode)."""
    monkeypatch.setattr(smbus2, "SMBus", SilentBus)
    with pytest.raises(DisplayError, match="no ssd1306 answers at I2C address 0x3c"):
        make_device(replace(config, driver="ssd1306"))


def test_without_a_device_screens_are_kept_but_not_drawn():
    display = Display(None)
    screen = screens.scoreboard({"white": 0, "black": 0}, "white")
    display.show(screen)
    display.tick(1.0)
    assert display.headless and display.screen is screen


def test_an_oled_unplugged_while_running_is_dropped_once_and_said_once(config):
    bus = Unplugged()
    device = make_device(replace(config, driver="ssd1306"), serial_interface=i2c(bus=bus))
    lost = []
    display = Display(device, on_lost=lost.append)
    display.show(screens.scoreboard({"white": 0, "black": 0}, "white"))
    assert bus.writes > 0 and not display.headless
    bus.plugged = False
    display.show(screens.last_move("white", "a1", {}))
    display.show(screens.illegal("no", ["a1"]), now=0.0)
    display.tick(1.0)
    assert display.headless and len(lost) == 1
    assert lost[0].startswith("the display stopped answering")
