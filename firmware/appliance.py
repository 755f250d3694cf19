"""``referee run``: the appliance on real (or USB-camera) hardware.

It referees with whatever is there: without an OLED (missing, at another address, unplugged
later) it says so once and goes on with the log and the buttons; without GPIO the keyboard
stands in for the buttons. Under systemd (``Type=notify``) it reports READY and pings the
watchdog from the loop. When the players confirm "shut down" in the menu it exits with
:data:`SHUTDOWN_STATUS`, which the unit turns into a power-off.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

from engine import FormatError

from .actions import Action, action_for_key
from .camera import CameraError, open_camera
from .config import I2C_DRIVERS, Config, ConfigError, load_config
from .display import Display, DisplayError, make_device
from .lock import JournalLockError, claim
from .loop import RefereeLoop, Report
from .watchdog import Notifier

#: ``referee run``'s exit status after a confirmed "shut down" (``SuccessExitStatus=`` of the unit,
#: whose ``ExecStopPost=`` powers the Pi off on it).
SHUTDOWN_STATUS = 64


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


def _device(config: Config) -> Any:
    """The display's device, or ``None`` (and the reason, once) when an OLED does not answer;
    an emulated display that cannot work is a configuration error (:class:`DisplayError`)."""
    try:
        return make_device(config.display)
    except DisplayError as exc:
        if config.display.driver not in I2C_DRIVERS:
            raise
        print(f"referee: no screen: {exc}; refereeing on without it", flush=True)
        return None


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
        device = _device(config)
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

    def display_lost(reason: str) -> None:
        print(f"referee: {reason}", flush=True)

    loop = RefereeLoop(
        camera,
        Display(device, on_lost=display_lost),
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
    notifier = Notifier.from_environment()
    signal.signal(signal.SIGTERM, _stop)  # systemctl stop: clean up as for Ctrl-C
    try:
        notifier.ready(f"refereeing ({camera.name})")
        loop.run(fps=args.fps, frames=args.frames, heartbeat=notifier.ping)
    except KeyboardInterrupt:
        print("referee: stopped", flush=True)
    finally:
        notifier.stopping()
        loop.close()
        camera.close()
        if buttons is not None:
            buttons.close()
        if server is not None:
            server.stop()
        if device is not None:
            device.persist = loop.shutdown_requested  # leave "shutting down" on the screen
            with contextlib.suppress(Exception):
                device.cleanup()
    if loop.shutdown_requested:
        print("referee: shutting down (the systemd unit powers the Pi off)", flush=True)
        return SHUTDOWN_STATUS
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
