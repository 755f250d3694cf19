"""The appliance's configuration: ``default_config.toml`` merged with the user's TOML file.

Every key has its default, and its documentation, in ``default_config.toml`` next to this module;
a user file holds only the keys it changes. :func:`load_config` refuses unknown sections and keys
(suggesting the closest known name) and bad values, with a :class:`ConfigError` naming the key::

    config = load_config("/etc/referee.toml")
    config.display.i2c_address   # 60 (0x3C)
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from engine.games import GAMES

DEFAULT_FILE = Path(__file__).with_name("default_config.toml")

#: BCM GPIO numbers on the 40-pin header, and the two the OLED's I2C bus uses (SDA, SCL).
GPIO_PINS = (0, 27)
I2C_PINS = {2: "I2C SDA", 3: "I2C SCL"}
I2C_DRIVERS = ("ssd1306", "sh1106")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


def _choice(*options: Any) -> Any:
    return field(metadata={"choices": options})


def _range(low: float, high: float) -> Any:
    return field(metadata={"range": (low, high)})


def _pin() -> Any:
    return _range(*GPIO_PINS)


@dataclass(frozen=True)
class CameraConfig:
    """``[camera]``: where frames come from."""

    source: str = _choice("picamera2", "device", "file", "folder", "synthetic")
    device: int = _range(0, 63)
    path: str = field()
    resolution: tuple[int, int] = _range(16, 8192)
    fps: float = _range(0.01, 240)
    retry_seconds: float = _range(0.1, 3600)
    frame_timeout: float = _range(0.5, 60)
    sensor_size: tuple[int, int] = _range(0, 16384)
    focus: str = _choice("manual", "once")
    lens_position: float = _range(0, 15)
    flicker_hz: int = _choice(0, 50, 60)
    exposure_constraint: str = _choice("normal", "highlight", "shadows")
    lock_exposure: bool = field()
    synthetic_game: str = _choice(*GAMES)
    seed: int = _range(0, 2**31 - 1)


@dataclass(frozen=True)
class DisplayConfig:
    """``[display]``: the OLED, or its emulation off the Pi."""

    driver: str = _choice(*I2C_DRIVERS, "window", "dummy", "capture", "gifanim")
    i2c_port: int = _range(0, 31)
    i2c_address: int = _range(0x03, 0x77)
    rotate: int = _choice(0, 2)
    contrast: int = _range(0, 255)
    output: Path = field()
    scale: int = _range(1, 8)
    frame_seconds: float = _range(0.01, 60)


@dataclass(frozen=True)
class ButtonsConfig:
    """``[buttons]``: BCM pins of the three buttons and the menu button's hold time."""

    confirm: int = _pin()
    undo: int = _pin()
    menu: int = _pin()
    hold_seconds: float = _range(0.3, 10)
    bounce_seconds: float = _range(0, 1)


@dataclass(frozen=True)
class BuzzerConfig:
    """``[buzzer]``: optional beeper for illegal placements."""

    enabled: bool = field()
    pin: int = _pin()
    kind: str = _choice("active", "tonal")


@dataclass(frozen=True)
class LedConfig:
    """``[led]``: optional warning light for illegal placements."""

    enabled: bool = field()
    pin: int = _pin()


@dataclass(frozen=True)
class VisionConfig:
    """``[vision]``: how long the board must be still before it is judged."""

    settle_seconds: float = _range(0, 30)


@dataclass(frozen=True)
class JournalConfig:
    """``[journal]``: where the running game's journal and the finished games are kept."""

    directory: Path = field()
    records: Path = field()


@dataclass(frozen=True)
class RecordConfig:
    """``[record]``: whether (and where) the frame of every accepted position is saved."""

    frames: bool = field()
    dir: str = field()

    def frames_dir(self, journal: JournalConfig) -> Path | None:
        """Where the frames go (``dir``, or ``frames`` in the journal's folder when ``dir`` is
        empty); ``None`` when ``frames`` is off."""
        if not self.frames:
            return None
        return Path(self.dir).expanduser() if self.dir else journal.directory / "frames"


@dataclass(frozen=True)
class GameConfig:
    """``[game]``: the game selected at start-up."""

    default: str = _choice("auto", *GAMES)


@dataclass(frozen=True)
class Config:
    """The whole configuration, one attribute per TOML section."""

    camera: CameraConfig
    display: DisplayConfig
    buttons: ButtonsConfig
    buzzer: BuzzerConfig
    led: LedConfig
    vision: VisionConfig
    journal: JournalConfig
    record: RecordConfig
    game: GameConfig


def load_config(path: str | Path | None = None) -> Config:
    """The defaults merged with the TOML file at ``path`` (``None``: the defaults alone)."""
    merged = _read(DEFAULT_FILE)
    source = "default config"
    if path is not None:
        source = str(path)
        _merge(merged, _read(Path(path)), source)
    return _build(merged, source)


def _build(data: Mapping[str, Any], source: str) -> Config:
    """A :class:`Config` from the merged sections; :class:`ConfigError` if a value is bad."""
    hints = get_type_hints(Config)
    config = Config(
        **{f.name: _section(hints[f.name], f.name, data[f.name], source) for f in fields(Config)}
    )
    _check_consistency(config, source)
    return config


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None


def _unknown(kind: str, name: str, known: list[str], prefix: str = "") -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {prefix + close[0]!r}?)" if close else f"; known: {', '.join(known)}"
    return f"unknown {kind} {prefix + name!r}{hint}"


def _merge(defaults: dict[str, Any], user: Mapping[str, Any], source: str) -> None:
    """Overwrite ``defaults`` in place with ``user``'s values, refusing unknown names."""
    for name, table in user.items():
        if name not in defaults:
            raise ConfigError(f"{source}: {_unknown('section', name, list(defaults))}")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{source}: [{name}] must be a table of keys")
        for key, value in table.items():
            if key not in defaults[name]:
                unknown = _unknown("key", key, list(defaults[name]), f"{name}.")
                raise ConfigError(f"{source}: {unknown}")
            defaults[name][key] = value


def _section(cls: type, name: str, table: Mapping[str, Any], source: str) -> Any:
    hints = get_type_hints(cls)
    values = {}
    for f in fields(cls):
        try:
            values[f.name] = _value(table[f.name], hints[f.name], f.metadata)
        except ValueError as exc:
            raise ConfigError(f"{source}: {name}.{f.name}: {exc}") from None
    return cls(**values)


def _value(raw: Any, hint: Any, rules: Mapping[str, Any]) -> Any:
    """``raw`` checked against the field's type and rules; ``ValueError`` saying what is wrong."""
    if hint == tuple[int, int]:
        if not (isinstance(raw, list) and len(raw) == 2):
            raise ValueError(f"expected two integers [a, b], got {raw!r}")
        return tuple(_value(item, int, rules) for item in raw)
    if hint is bool:
        if not isinstance(raw, bool):
            raise ValueError(f"expected true or false, got {raw!r}")
        return raw
    if hint in (int, float) and (isinstance(raw, bool) or not isinstance(raw, int | float)):
        raise ValueError(f"expected a number, got {raw!r}")
    if hint is int and not isinstance(raw, int):
        raise ValueError(f"expected an integer, got {raw!r}")
    if hint in (str, Path) and not isinstance(raw, str):
        raise ValueError(f"expected a string, got {raw!r}")
    if "choices" in rules and raw not in rules["choices"]:
        raise ValueError(f"{raw!r} is not one of {', '.join(map(repr, rules['choices']))}")
    if "range" in rules:
        low, high = rules["range"]
        if not low <= raw <= high:
            raise ValueError(f"{raw!r} is out of range {low}..{high}")
    if hint is Path:
        return Path(raw).expanduser()
    return float(raw) if hint is float else raw


def _check_consistency(config: Config, source: str) -> None:
    """Rules between keys: a path for file sources, no pin used twice or taken by I2C."""
    camera = config.camera
    if camera.source in ("file", "folder") and not camera.path:
        raise ConfigError(
            f"{source}: camera.path: required when camera.source is {camera.source!r}"
        )
    used: dict[int, str] = {}
    if config.display.driver in I2C_DRIVERS:
        used.update(I2C_PINS)
    buttons = config.buttons
    pins = [
        ("buttons.confirm", buttons.confirm),
        ("buttons.undo", buttons.undo),
        ("buttons.menu", buttons.menu),
    ]
    if config.buzzer.enabled:
        pins.append(("buzzer.pin", config.buzzer.pin))
    if config.led.enabled:
        pins.append(("led.pin", config.led.pin))
    for key, pin in pins:
        if pin in used:
            raise ConfigError(f"{source}: {key}: BCM pin {pin} is already used by {used[pin]}")
        used[pin] = key
