"""``referee demo``: a simulated game night, no hardware needed.

For each game a scripted game (:mod:`firmware.scenario`: random legal moves, one illegal
placement that is flagged and then put right, passes and exchanges where the game has them) is
filmed by the synthetic renderer (:mod:`firmware.simulator`: a hand comes over the board for
every move and leaves again) and refereed by the real appliance loop: vision (locate, settle,
read, decode) -> engine -> OLED screens (an emulated display writing an animated GIF) and the
journal. Every verdict is printed; the demo fails (exit 1) if one differs from what the scripted
players did.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import GAMES
from engine.referee import describe

from .config import load_config
from .display import GIF_FILE, Display, make_device
from .loop import RefereeLoop, Report
from .players import HonestPlayers
from .scenario import TABLE_OPTIONS, scripted_game
from .simulator import SimulatedTable

#: Every game the referee knows.
DEMO_GAMES = tuple(GAMES)


@dataclass(frozen=True)
class DemoResult:
    """What one game of the demo ended with."""

    game: str
    verdicts: tuple[str, ...]
    expected: tuple[str, ...]
    scores: dict[str, int]
    winner: str | None
    frames: int
    seconds: float
    gif: Path

    @property
    def mismatches(self) -> int:
        """Verdicts that differ from what the players did (missing or extra ones included)."""
        pairs = zip(self.verdicts, self.expected, strict=False)
        return sum(a != b for a, b in pairs) + abs(len(self.verdicts) - len(self.expected))


def play_demo_game(
    name: str,
    out_dir: Path,
    seed: int = 7,
    echo: bool = True,
    journal_dir: Path | None = None,
    feed: Any = None,
) -> DemoResult:
    """Film, read and referee one scripted game; print each verdict when ``echo``. With ``feed``
    (the live page's) the loop tells it everything and the game is played in real time."""
    start = time.perf_counter()
    script = scripted_game(name, seed=seed, **TABLE_OPTIONS.get(name, {}))
    table = SimulatedTable(script, seed=seed)
    config = load_config().display
    display = Display(
        make_device(dataclasses.replace(config, driver="gifanim", output=out_dir / name))
    )
    verdicts: list[str] = []

    def report(r: Report) -> None:
        if r.outcome is not None:
            verdicts.append(r.outcome.verdict.kind)
        if echo:
            print(
                f"  {r.t:6.1f}s {r.text if r.outcome is None else describe(r.outcome)}", flush=True
            )

    with tempfile.TemporaryDirectory() as tmp:
        base = journal_dir or Path(tmp)
        loop = RefereeLoop(
            table,
            display,
            game=name,
            options=script.options,
            journal_dir=base / "journal",
            records_dir=out_dir / name / "records",
            actions=table.next_action,
            on_report=report,
            settle_time=0.4,
            feed=feed,
        )
        players = HonestPlayers(loop, table)
        frames = 0
        started = time.monotonic()
        while not table.finished:
            loop.step()
            frames += 1
            if feed is not None:  # real time, for the people watching the page
                time.sleep(max(0.0, started + table.t - time.monotonic()))
            for event in table.take_events():
                loop.event(event)
            players.answer()  # a question on the screen: they say what they did
        loop.close()
    display.close()  # writes the GIF
    game = loop.referee.game if loop.referee else None
    expected = ("no-change", *(step.expect for step in script.steps))
    return DemoResult(
        name,
        tuple(verdicts),
        expected,
        game.scores if game else {},
        game.winner if game else None,
        frames,
        time.perf_counter() - start,
        out_dir / name / GIF_FILE,
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """Entry point of ``referee demo``."""
    names = [args.game] if args.game else list(DEMO_GAMES)
    out_dir = Path(args.out)
    server = None
    if args.web is not None:
        from engine import FormatError

        from .web.server import start_server

        try:
            server = start_server(args.web, "127.0.0.1", [out_dir / n / "records" for n in names])
        except (OSError, FormatError) as exc:
            print(f"referee: {exc}", file=sys.stderr)
            return 2
        print(f"referee: live page at {server.url}", flush=True)
    failed = 0
    try:
        failed = _play_all(names, out_dir, args, server.feed if server is not None else None)
        if server is not None:
            print(f"referee: the page stays at {server.url}; Ctrl-C to stop", flush=True)
            while True:
                time.sleep(1.0)
    except KeyboardInterrupt:
        if server is None:
            raise  # main() says so and exits 130
        print("referee: stopped", flush=True)
    finally:
        if server is not None:
            server.stop()
    return 1 if failed else 0


def _play_all(names: list[str], out_dir: Path, args: argparse.Namespace, feed: Any) -> int:
    """Play every game of the demo, printing each one's result; how many went wrong."""
    failed = 0
    total = time.perf_counter()
    for name in names:
        print(f"== {name} ==", flush=True)
        result = play_demo_game(name, out_dir, seed=args.seed, echo=not args.quiet, feed=feed)
        scores = ", ".join(f"{p} {s}" for p, s in result.scores.items())
        print(
            f"== {name}: final scores {scores}; winner {result.winner}; {len(result.verdicts)} "
            f"verdicts, {result.frames} frames in {result.seconds:.1f} s; screens: {result.gif}",
            flush=True,
        )
        if result.mismatches:
            print(f"!! {result.mismatches} verdicts differ from what the players did", flush=True)
            failed += 1
    print(f"demo finished in {time.perf_counter() - total:.1f} s", flush=True)
    return failed
