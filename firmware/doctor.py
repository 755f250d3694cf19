"""``referee doctor``: every part of the appliance checked in turn, one line each.

A line is ``[ok]`` with what was found, ``[!!]`` with what to do about it, or ``[--]`` for a check
that does not apply here (no ``vcgencmd`` off a Pi, buttons not pressed). Every check is run
whatever the others found, and none can end the doctor with a traceback: an unexpected error is
one more ``[!!]`` line naming it. The exit status is 1 when any line is ``[!!]``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import grp
import os
import pwd
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config import I2C_DRIVERS, Config, ConfigError, load_config
from .display import OLED_ADDRESSES, DisplayError, make_device

OK, FIX, SKIP = "ok", "!!", "--"
#: Groups the referee's user needs: the camera, the OLED's I2C bus and the buttons' GPIO.
GROUPS = {"video": "camera", "i2c": "OLED", "gpio": "buttons"}
#: The service's user (hardware/referee.service), checked beside the user running the doctor.
SERVICE_USER = "referee"
#: Free space the journal's disk should keep: a game's journal is a few kB, but saved frames
#: (``[record] frames``) take 100 to 300 kB a move and the system journal grows too.
MIN_FREE_MB = 200
#: ``vcgencmd get_throttled`` bits: (bit, now or since boot, what).
THROTTLED_BITS = (
    (0, "now", "under-voltage"),
    (1, "now", "ARM frequency capped"),
    (2, "now", "throttled"),
    (3, "now", "soft temperature limit"),
    (16, "since boot", "under-voltage"),
    (17, "since boot", "ARM frequency capped"),
    (18, "since boot", "throttled"),
    (19, "since boot", "soft temperature limit"),
)
#: I2C addresses a referee's parts answer at (i2cdetect's range is 0x03-0x77).
KNOWN_I2C = dict.fromkeys(OLED_ADDRESSES, "an SSD1306/SH1106 OLED")

Say = Callable[[str, str], None]


class Doctor:
    """Collects the lines; :meth:`check` runs one check and turns any error into a line."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.out = out
        self.problems = 0

    def say(self, state: str, text: str) -> None:
        """Print one line: ``state`` is :data:`OK`, :data:`FIX` or :data:`SKIP`."""
        self.problems += state == FIX
        self.out(f"  [{state}] {text}")

    def check(self, name: str, run: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """Run ``run(say, *args, **kwargs)``; an exception is a ``[!!]`` line, not a crash."""
        try:
            run(self.say, *args, **kwargs)
        except Exception as exc:
            self.say(FIX, f"{name}: unexpected {type(exc).__name__}: {exc}")


def cmd_doctor(args: argparse.Namespace) -> int:
    """``referee doctor [--config FILE] [--press-seconds S]``."""
    doctor = Doctor(lambda line: print(line, flush=True))
    print("referee doctor", flush=True)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        doctor.say(FIX, f"configuration: {exc}")
        return 1
    doctor.say(OK, f"configuration {args.config or '(defaults)'} is valid")
    doctor.check("journal", check_journal, config)
    doctor.check("camera", check_camera, config)
    if config.display.driver in I2C_DRIVERS:
        doctor.check("I2C", check_i2c_bus, config)
    doctor.check("display", check_display, config)
    press = args.press_seconds
    if press is None:
        press = 10.0 if sys.stdin.isatty() else 0.0
    doctor.check("buttons", check_buttons, config, press_seconds=press)
    doctor.check("groups", check_groups)
    doctor.check("power", check_power)
    doctor.check("disk", check_disk, config)
    print("all good" if not doctor.problems else f"{doctor.problems} problem(s) found")
    return 0 if not doctor.problems else 1


def check_journal(say: Say, config: Config) -> None:
    """The journal and records folders can be written, and no referee holds the journal."""
    from .lock import JournalLockError, claim

    directory = config.journal.directory.expanduser()
    try:
        claim(directory, config.journal.records.expanduser()).release()
    except JournalLockError as exc:
        say(FIX, f"journal: {exc}")
    else:
        say(OK, f"journal: {directory} is writable and free")


# ---------------------------------------------------------------------- camera and markers
def check_camera(say: Say, config: Config) -> None:
    """A frame, the camera's focus, the markers, their size and the board's place."""
    from .camera import CameraError, open_camera

    try:
        camera = open_camera(config.camera)
    except CameraError as exc:
        say(FIX, f"camera: {exc}")
        return
    with camera:
        ok, frame, _ = camera.read()
        if not ok or frame is None:
            say(FIX, f"camera ({config.camera.source}): no frame: {camera.status.message}")
            return
        say(
            OK,
            ", ".join(
                (
                    f"camera ({config.camera.source}): {frame.shape[1]}x{frame.shape[0]} frames",
                    *camera.notes,
                )
            ),
        )
        _check_board(say, frame)


def _check_board(say: Say, frame: Any) -> None:
    from vision.locate import BoardLocator, BoardNotFound
    from vision.placement import BoardPlacement, board_offset

    from .focus import SOFT_EDGE_PX, edge_width

    try:
        # the mat's pose: where the board lies on it is found once, below
        pose = BoardLocator(find_placement=False).locate(frame, 0.0)
    except BoardNotFound as exc:
        say(FIX, f"markers: {exc}")
        say(SKIP, "focus: not measured (it is measured on the markers)")
        return
    total = len(pose.geometry.markers)
    seen = len(pose.markers_seen)
    say(
        OK if seen == total else FIX,
        f"markers: {pose.game} mat, {seen} of {total} markers seen, "
        f"fit error {pose.reprojection_error:.2f} px",
    )
    say(FIX if pose.too_far else OK, _marker_size(pose))
    if pose.markers_registered:
        say(
            FIX,
            f"marker bits: {len(pose.markers_registered)} of {seen} markers found only from their "
            "outlines, their bits too blurred, small or bright to read one by one (the board is "
            "found, less surely): focus the camera, bring it closer or dim the lamp "
            "(hardware/setup.md, Focus, Camera height and Light)",
        )
    if pose.markers_bled:
        say(
            FIX,
            f"exposure: {len(pose.markers_bled)} of {seen} markers read only with the paper's "
            "light taken off their black (over-exposed, or a lamp's glare on the mat): dim or "
            "move the lamp (hardware/setup.md, Light)",
        )
    width = edge_width(frame, pose)
    if width is None:
        say(SKIP, "focus: no marker to measure it on")
    elif width <= SOFT_EDGE_PX:
        say(OK, f"focus: marker edges {width:.1f} px wide (sharp: up to {SOFT_EDGE_PX:g} px)")
    else:
        say(
            FIX,
            f"focus: marker edges {width:.1f} px wide, over {SOFT_EDGE_PX:g} px: the picture is "
            "soft; set [camera] lens_position to 1 / (camera-to-mat distance in m), or "
            'focus = "once" (hardware/setup.md, Focus)',
        )
    _check_view(say, frame, pose.geometry)
    finder = BoardPlacement(pose.geometry)
    if not finder.enabled:
        return
    placement = finder.estimate(frame, pose)
    if placement is None:
        say(
            FIX,
            "board: its edges are not seen on the mat (no board, a dim light, or a board the "
            "colour of the paper): it is read on its corner marks, so lay it exactly on them",
        )
    else:
        mm, deg = board_offset(finder, placement)
        say(
            OK if mm <= 5.0 and abs(deg) <= 3.0 else FIX,
            f"board: {mm:.1f} mm and {deg:+.1f} degrees off its corner marks"
            + (" (read where it lies; nudge it onto the marks)" if mm > 5.0 else ""),
        )


def _check_view(say: Say, frame: Any, geometry: Any) -> None:
    """Whether the game's reader finds anything over the board: set up with nothing over it, a
    board read as occluded is one whose light or focus the model takes for a hand, and the
    referee would wait on every move."""
    from vision.locate import BoardLocator
    from vision.readers import reader_for

    locator = BoardLocator([geometry])
    locator.locate(frame, 0.0)
    pose = locator.locate(frame, 0.1)  # a second look confirms where the board lies
    reader = reader_for(geometry.game, geometry)
    obs = reader.read(frame, pose)
    if not obs.occluded:
        pieces = sum(content is not None for content in obs.cells.values())
        say(OK, f"view: nothing over the board ({pieces} of {len(obs.cells)} cells hold a piece)")
        return
    names, _, _, foreign = reader.cell_probabilities(reader.predict(frame, pose))
    worst = [names[i] for i in foreign.argsort()[::-1][:3]]
    say(
        FIX,
        f"view: something looks to be over the board (most at {', '.join(worst)}): take away what "
        "is there; if nothing is, the light or the focus makes the board look foreign: an even "
        "light without glare and a sharp picture (hardware/setup.md, Light and Focus); in a "
        'game, OK on the "hand over the board" screen reads it as clear',
    )


def _marker_size(pose: Any) -> str:
    """The line on the markers' size in the image: when they are too small, how far the camera
    is from them and how far it should be."""
    from vision.locate import RELIABLE_MARKER_PX

    text = f"marker size: {pose.marker_px:.0f} px a side"
    if not pose.too_far:
        return f"{text} (at least {RELIABLE_MARKER_PX:.0f} px needed)"
    _, _, height = pose.camera_centre()
    target = height * pose.marker_px / RELIABLE_MARKER_PX
    return (
        f"{text}, under the {RELIABLE_MARKER_PX:.0f} px needed: the camera is too far for "
        f"reliable reading; bring it from about {height / 10:.0f} cm to {target / 10:.0f} cm "
        "from the markers (hardware/setup.md, Camera height)"
    )


# ---------------------------------------------------------------------- I2C and the display
def scan_i2c(bus: Any) -> list[int]:
    """The addresses that answer on an open smbus2 ``bus``, as ``i2cdetect -y`` probes them
    (a read at 0x30-0x37 and 0x50-0x5F, where a quick write could harm an EEPROM)."""
    found = []
    for address in range(0x03, 0x78):
        try:
            if 0x30 <= address <= 0x37 or 0x50 <= address <= 0x5F:
                bus.read_byte(address)
            else:
                bus.write_quick(address)
        except OSError:
            continue
        found.append(address)
    return found


def check_i2c_bus(say: Say, config: Config, open_bus: Callable[[int], Any] | None = None) -> None:
    """What answers on the OLED's I2C bus, and whether the OLED is among it.

    ``open_bus`` opens a bus by number (default ``smbus2.SMBus``)."""
    port, address = config.display.i2c_port, config.display.i2c_address
    if open_bus is None:
        from smbus2 import SMBus as open_bus
    try:
        bus = open_bus(port)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            say(FIX, f"I2C bus {port}: permission denied: add the user to the i2c group")
        else:
            say(
                FIX,
                f"I2C bus {port}: not found (/dev/i2c-{port}): enable I2C with "
                "`sudo raspi-config nonint do_i2c 0` and reboot",
            )
        return
    try:
        found = scan_i2c(bus)
    finally:
        with contextlib.suppress(Exception):
            bus.close()
    names = ", ".join(f"{a:#04x} ({KNOWN_I2C.get(a, 'unknown device')})" for a in found)
    if address in found:
        say(OK, f"I2C bus {port}: {names}")
        return
    oled = [a for a in found if a in OLED_ADDRESSES]
    if oled:
        say(
            FIX,
            f"I2C bus {port}: {names}; nothing at {address:#04x}: set [display] i2c_address = "
            f"{oled[0]:#04x}",
        )
    else:
        say(
            FIX,
            f"I2C bus {port}: {names or 'nothing answers'}; no OLED at 0x3c or 0x3d: check "
            "its wiring (SDA to GPIO 2 = pin 3, SCL to GPIO 3 = pin 5, VCC to 3.3 V, GND)",
        )


def check_display(say: Say, config: Config) -> None:
    """The configured display opens (an OLED answers its initialisation)."""
    try:
        device = make_device(config.display)
    except DisplayError as exc:
        say(FIX, f"display: {exc}")
        return
    say(OK, f"display: {config.display.driver} answers")
    with contextlib.suppress(Exception):
        device.cleanup()


# ---------------------------------------------------------------------- buttons
def check_buttons(
    say: Say,
    config: Config,
    *,
    press_seconds: float = 10.0,
    pin_factory: Any = None,
    prompt: Callable[[str], None] = lambda text: print(text, flush=True),
) -> None:
    """The buttons' pins open; with ``press_seconds`` each button is asked for in turn and
    confirmed when pressed within that time."""
    from .buttons import Buttons

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gpiozero's pin factory fallbacks, one per library
            buttons = Buttons.from_config(config.buttons, pin_factory=pin_factory)
    except Exception as exc:  # gpiozero raises several kinds when there is no GPIO at all
        say(
            FIX,
            f"buttons: no GPIO ({type(exc).__name__}: {exc}); on a Pi add the user to the "
            "gpio group and install python3-lgpio",
        )
        return
    with buttons:
        pins = config.buttons
        named = (
            ("CONFIRM", buttons.confirm, pins.confirm),
            ("UNDO", buttons.undo, pins.undo),
            ("MENU", buttons.menu, pins.menu),
        )
        if press_seconds <= 0:
            say(
                SKIP,
                f"buttons on GPIO {pins.confirm}, {pins.undo}, {pins.menu}: not pressed "
                "(--press-seconds 10 asks for each)",
            )
            return
        for name, button, pin in named:
            prompt(f"  press {name} (GPIO {pin}) within {press_seconds:g} s ...")
            if button.wait_for_press(timeout=press_seconds):
                say(OK, f"button {name} (GPIO {pin}) pressed")
                button.wait_for_release(timeout=press_seconds)
            else:
                say(
                    FIX,
                    f"button {name} (GPIO {pin}): no press in {press_seconds:g} s: check it "
                    f"is wired between GPIO {pin} and ground (hardware/wiring.md)",
                )


# ---------------------------------------------------------------------- the system
def check_groups(say: Say, users: list[str] | None = None) -> None:
    """The users (default: the one running the doctor, and the service's if it exists) are in
    the groups of :data:`GROUPS`."""
    if users is None:
        users = [pwd.getpwuid(os.getuid()).pw_name]
        with contextlib.suppress(KeyError):
            users.append(pwd.getpwnam(SERVICE_USER).pw_name)
    absent = [g for g in GROUPS if not _group_exists(g)]
    if absent:
        say(
            FIX,
            f"groups: {', '.join(absent)} do not exist on this system (not Raspberry Pi OS?); "
            "hardware/install.sh creates them",
        )
    for user in dict.fromkeys(users):
        member = _groups_of(user)
        missing = [g for g in GROUPS if g not in member and g not in absent]
        if user == "root" or not missing:
            say(OK, f"groups: {user} can use " + ", ".join(GROUPS.values()))
        else:
            what = ", ".join(f"{g} ({GROUPS[g]})" for g in missing)
            say(
                FIX,
                f"groups: {user} is not in {what}: sudo usermod -aG {','.join(missing)} "
                f"{user}, then log in again",
            )


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def _groups_of(user: str) -> set[str]:
    entry = pwd.getpwnam(user)
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    with contextlib.suppress(KeyError):
        names.add(grp.getgrgid(entry.pw_gid).gr_name)
    return names


def check_power(say: Say, run: Callable[..., Any] = subprocess.run) -> None:
    """Under-voltage and throttling, now and since boot (``vcgencmd get_throttled``)."""
    try:
        done = run(["vcgencmd", "get_throttled"], capture_output=True, text=True, timeout=10)
    except FileNotFoundError:
        say(SKIP, "power: no vcgencmd (not a Raspberry Pi): under-voltage not checked")
        return
    value = done.stdout.strip().partition("=")[2]
    try:
        bits = int(value, 16)
    except ValueError:
        say(
            FIX,
            f"power: vcgencmd said {(done.stdout + done.stderr).strip()!r}: add the user to "
            "the video group",
        )
        return
    if bits == 0:
        say(OK, "power: no under-voltage or throttling since boot")
        return
    flags = [f"{what} {when}" for bit, when, what in THROTTLED_BITS if bits >> bit & 1]
    say(
        FIX,
        f"power: {', '.join(flags)} ({value}): use the official 5 V supply (5 A for a Pi 5, "
        "3 A for a Pi 4) and a short cable; cool the Pi if it overheats",
    )


def check_disk(say: Say, config: Config) -> None:
    """Free space where the journal goes, and that it can be written."""
    directory = config.journal.directory.expanduser()
    existing = next(p for p in (directory, *directory.parents) if p.exists())
    free_mb = shutil.disk_usage(existing).free / 1e6
    writable = os.access(existing, os.W_OK)
    if not writable:
        say(FIX, f"disk: {existing} is not writable by this user: the journal goes to {directory}")
    elif free_mb < MIN_FREE_MB:
        say(
            FIX,
            f"disk: {free_mb:.0f} MB free for the journal ({directory}), under "
            f"{MIN_FREE_MB} MB: delete old records and frames, or `sudo journalctl "
            "--vacuum-size=50M`",
        )
    else:
        say(OK, f"disk: {free_mb / 1000:.1f} GB free for the journal ({Path(directory)})")
