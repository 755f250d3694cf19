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
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

from .actions import Action, action_for_key
from .camera import CameraError, open_camera
from .config import I2C_DRIVERS, Config, ConfigError, load_config
from .display import Display, DisplayError, make_device
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
        config = load_config(args.config)
        camera = open_camera(config.camera)
        device = _device(config)
    except (ConfigError, CameraError, DisplayError) as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    buttons, note = _buttons(config)
    actions = buttons.read if buttons is not None else _keyboard()
    print(f"referee: {note}{'' if buttons else ': keys on stdin (Enter, u, m, c)'}", flush=True)
    game = args.game or (None if config.game.default == "auto" else config.game.default)

    def report(r: Report) -> None:
        print(f"[{r.phase.value}] {r.text}", flush=True)

    def display_lost(reason: str) -> None:
        print(f"referee: {reason}", flush=True)

    loop = RefereeLoop(
        camera,
        Display(device, on_lost=display_lost),
        game=game,
        journal_dir=config.journal.directory.expanduser(),
        records_dir=config.journal.records.expanduser(),
        frames_dir=config.record.frames_dir(config.journal),
        actions=actions,
        alarm=_alarm(config),
        settle_time=config.vision.settle_seconds,
        on_report=report,
    )
    notifier = Notifier.from_environment()
    signal.signal(signal.SIGTERM, _stop)  # systemctl stop: clean up as for Ctrl-C
    try:
        notifier.ready(f"refereeing ({camera.name})")
        loop.run(fps=args.fps, heartbeat=notifier.ping)
    except KeyboardInterrupt:
        print("referee: stopped", flush=True)
    finally:
        notifier.stopping()
        loop.close()
        camera.close()
        if buttons is not None:
            buttons.close()
        if device is not None:
            device.persist = loop.shutdown_requested  # leave "shutting down" on the screen
            with contextlib.suppress(Exception):
                device.cleanup()
    if loop.shutdown_requested:
        print("referee: shutting down (the systemd unit powers the Pi off)", flush=True)
        return SHUTDOWN_STATUS
    return 0
