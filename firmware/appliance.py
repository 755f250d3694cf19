"""``referee run`` and ``referee doctor``: the appliance on real (or USB-camera) hardware."""

from __future__ import annotations

import argparse
import contextlib
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


def cmd_run(args: argparse.Namespace) -> int:
    """Run the referee until Ctrl-C (or until the systemd service is stopped)."""
    server = None
    try:
        config = load_config(args.config)
        if args.web is not None:
            from .web.server import lan_address, start_server

            records = config.journal.records.expanduser()
            server = start_server(args.web, lan_address(), records)
        camera = open_camera(config.camera)
        device = make_device(config.display)
    except (ConfigError, CameraError, DisplayError, OSError, FormatError) as exc:
        print(f"referee: {exc}", file=sys.stderr)
        if server is not None:
            server.stop()
        return 2
    if server is not None:
        print(f"referee: live page at {server.url}", flush=True)
    buttons, note = _buttons(config)
    actions = buttons.read if buttons is not None else _keyboard()
    print(f"referee: {note}{'' if buttons else ': keys on stdin (Enter, u, m, c)'}", flush=True)
    game = args.game or (None if config.game.default == "auto" else config.game.default)

    def report(r: Report) -> None:
        print(f"[{r.phase.value}] {r.text}", flush=True)

    loop = RefereeLoop(
        camera,
        Display(device),
        game=game,
        journal_dir=config.journal.directory.expanduser(),
        records_dir=config.journal.records.expanduser(),
        frames_dir=config.record.frames_dir(config.journal),
        actions=actions,
        alarm=_alarm(config),
        settle_time=config.vision.settle_seconds,
        on_report=report,
        feed=server.feed if server is not None else None,
        web_url=server.url if server is not None else None,
    )
    signal.signal(signal.SIGTERM, _stop)  # systemctl stop: clean up as for Ctrl-C
    try:
        loop.run(fps=args.fps)
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
