"""``referee run`` and ``referee doctor``: the appliance on real (or USB-camera) hardware."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine import FormatError

from .actions import Action, action_for_key
from .camera import CameraError, open_camera
from .config import Config, ConfigError, load_config
from .display import Display, DisplayError, make_device
from .lock import JournalLockError, claim
from .loop import RefereeLoop, Report

if TYPE_CHECKING:
    from vision.locate import BoardPose


def _buttons(config: Config) -> tuple[Any, str]:
    """The GPIO buttons (``None`` when the machine has no GPIO) and a note saying so."""
    try:
        from .buttons import Buttons

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gpiozero's pin factory fallbacks, one per library
            buttons = Buttons.from_config(config.buttons)
    except Exception as exc:  # gpiozero raises several kinds when there is no GPIO at all
        return None, f"no GPIO buttons ({type(exc).__name__})"
    return (
        buttons,
        f"buttons on GPIO {config.buttons.confirm}, {config.buttons.undo}, {config.buttons.menu}",
    )


def _keyboard() -> Callable[[], Action | None]:
    """Actions typed on stdin, one key per line (Enter alone = confirm), read in a thread."""
    pending: list[Action] = []
    lock = threading.Lock()

    def reader() -> None:
        for line in sys.stdin:
            action = action_for_key(line.strip() or "enter")
            if action is not None:
                with lock:
                    pending.append(action)

    threading.Thread(target=reader, daemon=True).start()

    def next_action() -> Action | None:
        with lock:
            return pending.pop(0) if pending else None

    return next_action


def _alarm(config: Config) -> Any:
    if not (config.buzzer.enabled or config.led.enabled):
        return None
    from .buttons import Alarm

    return Alarm.from_config(config.buzzer, config.led)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


#: ``--simulate``'s subfolder of the ``[journal]`` folders.
SIMULATED = "simulated"


def _laptop(config: Config, args: argparse.Namespace) -> Config:
    """``--simulate GAME`` (the synthetic table playing GAME, journal and records in a
    ``simulated`` subfolder) or ``--webcam N`` (a USB camera): the camera they name, and the
    screens in a window."""
    camera, game, journal = config.camera, config.game, config.journal
    if args.simulate:
        camera = dataclasses.replace(camera, source="synthetic", synthetic_game=args.simulate)
        game = dataclasses.replace(game, default=args.simulate)
        # the simulated games never touch the journal and records of the real table
        journal = dataclasses.replace(
            journal, directory=journal.directory / SIMULATED, records=journal.records / SIMULATED
        )
    elif args.webcam is not None:
        camera = dataclasses.replace(camera, source="device", device=args.webcam)
    else:
        return config
    display = dataclasses.replace(config.display, driver="window")
    return dataclasses.replace(config, camera=camera, display=display, game=game, journal=journal)


def _window_or_fallback(config: Config) -> tuple[Config, str]:
    """``driver = "window"`` where a window can open; else PNG files (``capture``, when
    luma.emulator is installed) or nothing but the console (``dummy``), and a note why."""
    if config.display.driver != "window":
        return config, ""
    from .window import window_problem

    problem = window_problem()
    if problem is None:
        return config, "screens in a window; keys Enter/space, u, m, c (q or Esc stops)"
    try:
        import luma.emulator  # noqa: F401
    except ImportError:
        fallback, where = "dummy", "on the console only"
    else:
        fallback, where = "capture", f"as PNG files in {config.display.output}"
    display = dataclasses.replace(config.display, driver=fallback)
    return dataclasses.replace(config, display=display), f"{problem}: screens {where}"


def cmd_run(args: argparse.Namespace) -> int:
    """Run the referee until Ctrl-C (or until the systemd service is stopped)."""
    try:
        config, window = _window_or_fallback(_laptop(load_config(args.config), args))
    except ConfigError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    journal_dir = config.journal.directory.expanduser()
    records_dir = config.journal.records.expanduser()
    try:  # before the page, the camera and the OLED: a second referee touches none of them
        lock = claim(journal_dir, records_dir)
    except JournalLockError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    server = None
    try:
        if args.web is not None:
            from .web.server import lan_address, start_server

            server = start_server(args.web, lan_address(), records_dir)
        camera = open_camera(config.camera)
        device = make_device(config.display)
    except (CameraError, DisplayError, OSError, FormatError) as exc:
        if server is not None:
            server.stop()
        lock.release()
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    if window:
        print(f"referee: {window}", flush=True)
    if server is not None:
        print(f"referee: live page at {server.url}", flush=True)
    game = args.game or (None if config.game.default == "auto" else config.game.default)

    def report(r: Report) -> None:
        print(f"[{r.phase.value}] {r.text}", flush=True)

    loop = RefereeLoop(
        camera,
        Display(device),
        game=game,
        journal_dir=journal_dir,
        records_dir=records_dir,
        frames_dir=config.record.frames_dir(config.journal),
        journal_lock=lock,
        # the simulated table plays its script from the start: always a new game
        options=dict(camera.script.options) if args.simulate else None,
        alarm=_alarm(config),
        settle_time=config.vision.settle_seconds,
        on_report=report,
        feed=server.feed if server is not None else None,
        web_url=server.url if server is not None else None,
    )
    buttons, note = (None, "") if config.display.driver == "window" else _buttons(config)
    loop.actions = _actions(camera, buttons, config.display.driver == "window")
    loop.events = getattr(camera, "take_events", list)  # typed by the simulated players
    if note:
        keys = "" if buttons else ": keys on stdin (Enter, u, m, c)"
        print(f"referee: {note}{keys}", flush=True)
    signal.signal(signal.SIGTERM, _stop)  # systemctl stop: clean up as for Ctrl-C
    try:
        loop.run(fps=args.fps, frames=args.frames)
    except KeyboardInterrupt:
        print("referee: stopped", flush=True)
    finally:
        loop.close()
        camera.close()
        if buttons is not None:
            buttons.close()
        if server is not None:
            server.stop()
        with contextlib.suppress(Exception):
            device.cleanup()
    return 0


def _actions(camera: Any, buttons: Any, window: bool) -> Callable[[], Action | None]:
    """The loop's actions: the simulated players' presses (``--simulate``), then the window's
    keys, the GPIO buttons or the keys typed on stdin."""
    if window:
        from .window import WindowKeys

        own: Callable[[], Action | None] = WindowKeys()
    else:
        own = buttons.read if buttons is not None else _keyboard()
    scripted = getattr(camera, "next_action", None)
    if scripted is None:
        return own

    def both() -> Action | None:
        action = scripted()
        return action if action is not None else own()

    return both


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check configuration, camera, markers, display and buttons; say what is wrong plainly."""
    problems = 0

    def say(ok: bool, text: str) -> None:
        nonlocal problems
        problems += not ok
        print(f"  [{'ok' if ok else '!!'}] {text}", flush=True)

    print("referee doctor")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        say(False, f"configuration: {exc}")
        return 1
    say(True, f"configuration {args.config or '(defaults)'} is valid")
    _check_journal(config, say)
    _check_camera(config, say)
    try:
        device = make_device(config.display)
        say(True, f"display: {config.display.driver} answers")
        with contextlib.suppress(Exception):
            device.cleanup()
    except DisplayError as exc:
        say(False, f"display: {exc}")
    buttons, note = _buttons(config)
    say(buttons is not None, note)
    if buttons is not None:
        buttons.close()
    print("all good" if not problems else f"{problems} problem(s) found")
    return 0 if not problems else 1


def _check_journal(config: Config, say: Callable[[bool, str], None]) -> None:
    """The journal and records folders can be written, and no referee holds the journal."""
    directory = config.journal.directory.expanduser()
    try:
        claim(directory, config.journal.records.expanduser()).release()
    except JournalLockError as exc:
        say(False, f"journal: {exc}")
    else:
        say(True, f"journal: {directory} is writable and free")


def _marker_size(pose: BoardPose) -> str:
    """The doctor's line on the markers' size in the image: when they are too small, how far
    the camera is from them and how far it should be."""
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


def _check_camera(config: Config, say: Callable[[bool, str], None]) -> None:
    try:
        camera = open_camera(config.camera)
    except CameraError as exc:
        say(False, f"camera: {exc}")
        return
    with camera:
        ok, frame, _ = camera.read()
        if not ok or frame is None:
            say(False, f"camera ({config.camera.source}): no frame: {camera.status.message}")
            return
        say(True, f"camera ({config.camera.source}): {frame.shape[1]}x{frame.shape[0]} frames")
        from vision.locate import BoardLocator, BoardNotFound

        try:
            pose = BoardLocator().locate(frame, 0.0)
        except BoardNotFound as exc:
            say(False, f"markers: {exc}")
            return
        total = len(pose.geometry.markers)
        seen = len(pose.markers_seen)
        say(
            seen == total,
            f"markers: {pose.game} mat, {seen} of {total} markers seen, "
            f"fit error {pose.reprojection_error:.2f} px",
        )
        say(not pose.too_far, _marker_size(pose))
        from vision.placement import BoardPlacement, board_offset

        finder = BoardPlacement(pose.geometry)
        if finder.enabled:
            mm, deg = board_offset(finder, pose.placement)
            say(
                mm <= 5.0 and abs(deg) <= 3.0,
                f"board: {mm:.1f} mm and {deg:+.1f} degrees off its corner marks"
                + (" (read where it lies; nudge it onto the marks)" if mm > 5.0 else ""),
            )
