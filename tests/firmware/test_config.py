"""The TOML configuration: documented defaults, merged user files, errors that name the key."""

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from firmware.config import DEFAULT_FILE, Config, ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_every_default_key_is_a_documented_config_field():
    defaults = tomllib.loads(DEFAULT_FILE.read_text())
    sections = {f.name: f.type for f in fields(Config)}
    assert list(defaults) == list(sections)
    config = load_config()
    for name, table in defaults.items():
        section = getattr(config, name)
        assert list(table) == [f.name for f in fields(section)], name
    lines = DEFAULT_FILE.read_text().splitlines()
    for i, line in enumerate(lines):  # every key has a comment in the lines above it
        if "=" in line and not line.startswith("#"):
            j = i - 1
            while j >= 0 and "=" in lines[j] and not lines[j].startswith("#"):
                j -= 1
            assert lines[j].startswith("#"), line


def test_defaults_are_the_documented_hardware():
    config = load_config()
    assert config.display.driver == "ssd1306" and config.display.i2c_address == 0x3C
    assert (config.buttons.confirm, config.buttons.undo, config.buttons.menu) == (17, 27, 22)
    assert config.buttons.hold_seconds == 1.5
    assert config.camera.resolution == (1280, 960)
    assert not config.buzzer.enabled and not config.led.enabled
    assert config.journal.directory.is_absolute()  # "~" expanded


def test_a_user_file_overrides_only_its_keys(tmp_path):
    path = write(
        tmp_path,
        """
        [display]
        driver = "sh1106"
        i2c_address = 0x3D
        rotate = 2
        [camera]
        source = "device"
        device = 1
        resolution = [640, 480]
        [game]
        default = "blokus-duo"
        """,
    )
    config = load_config(path)
    defaults = load_config()
    assert config.display.driver == "sh1106" and config.display.i2c_address == 0x3D
    assert config.display.rotate == 2 and config.display.contrast == defaults.display.contrast
    assert config.camera.resolution == (640, 480) and config.camera.device == 1
    assert config.camera.retry_seconds == defaults.camera.retry_seconds
    assert config.game.default == "blokus-duo"
    assert config.buttons == defaults.buttons


def test_an_integer_is_accepted_where_seconds_are_expected(tmp_path):
    config = load_config(write(tmp_path, "[vision]\nsettle_seconds = 2\n"))
    assert config.vision.settle_seconds == 2.0 and isinstance(config.vision.settle_seconds, float)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[display]\naddress = 60\n", "key 'display.address' (did you mean 'display.i2c_address'"),
        ("[buttons]\nmneu = 5\n", "unknown key 'buttons.mneu' (did you mean 'buttons.menu'"),
        ("[buttons]\nshutdown = 5\n", "unknown key 'buttons.shutdown'; known: confirm, undo, menu"),
        ("[dispaly]\ndriver = 'dummy'\n", "unknown section 'dispaly' (did you mean 'display'"),
        ("[display]\ndriver = 'st7735'\n", "display.driver: 'st7735' is not one of"),
        ("[display]\ni2c_address = '3c'\n", "display.i2c_address: expected a number"),
        ("[display]\ni2c_address = 0x78\n", "display.i2c_address: 120 is out of range"),
        ("[display]\nrotate = 1\n", "display.rotate: 1 is not one of 0, 2"),
        ("[buttons]\nconfirm = 1.5\n", "buttons.confirm: expected an integer"),
        ("[buttons]\nundo = 40\n", "buttons.undo: 40 is out of range 0..27"),
        ("[buttons]\nhold_seconds = true\n", "buttons.hold_seconds: expected a number"),
        ("[buzzer]\nenabled = 'yes'\n", "buzzer.enabled: expected true or false"),
        ("[camera]\nresolution = [640]\n", "camera.resolution: expected two integers"),
        ("[camera]\nresolution = [640, 4.5]\n", "camera.resolution: expected an integer"),
        ("[journal]\ndirectory = 3\n", "journal.directory: expected a string"),
        ("[game]\ndefault = 'chess'\n", "game.default: 'chess' is not one of"),
        ("camera = 3\n", "[camera] must be a table"),
        ("[camera]\nsource = 'file'\n", "camera.path: required when camera.source is 'file'"),
        ("[buttons]\nundo = 17\n", "buttons.undo: BCM pin 17 is already used by buttons.confirm"),
        ("[buttons]\nmenu = 2\n", "buttons.menu: BCM pin 2 is already used by I2C SDA"),
        (
            "[buzzer]\nenabled = true\npin = 22\n",
            "buzzer.pin: BCM pin 22 is already used by buttons.menu",
        ),
        ("[display\n", "not valid TOML"),
    ],
)
def test_bad_files_are_refused_naming_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_pins_are_free_again_when_their_parts_are_off(tmp_path):
    text = "[display]\ndriver = 'dummy'\n[buttons]\nmenu = 2\n[buzzer]\npin = 17\n"
    config = load_config(write(tmp_path, text))
    assert config.buttons.menu == 2 and config.buzzer.pin == 17


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read config file .*nothing\.toml"):
        load_config(tmp_path / "nothing.toml")
