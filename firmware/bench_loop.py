"""``referee bench loop``: how fast a verdict reaches the screen, and how much memory it takes.

Latency: a scripted game is filmed by the simulated table at 10 frames a second (simulated time)
and refereed by the real loop (vision, engine, screens on luma's dummy device, journal). For every
move, latency = (time of the frame whose verdict was shown - time of the first frame without the
hand) + the wall-clock time the loop took on that frame. Memory: ``referee run`` is started as a
child process with the synthetic camera source and its peak resident set size is read back, and
beside it the peak of its private memory: the resident set also counts the pages of the shared
libraries mapped in, which the page cache may hold in larger or smaller pieces (library files
read whole beforehand: about 40 MB more, ``docs/benchmarks.md``; measure with the caches
dropped), while the private memory is the process's own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from luma.core.device import dummy

from .display import Display
from .loop import RefereeLoop, Report
from .scenario import scripted_game
from .simulator import SimulatedTable


@dataclass(frozen=True)
class LoopBench:
    """The figures of ``referee bench loop``."""

    game: str
    moves: int
    latency_s_median: float
    latency_s_max: float
    frame_ms_median: float
    rss_mb: float | None
    private_mb: float | None = None

    def to_json(self) -> dict[str, float | int | str | None]:
        """The JSON object of ``--json``."""
        return {
            "game": self.game,
            "moves": self.moves,
            "latency_s_median": round(self.latency_s_median, 3),
            "latency_s_max": round(self.latency_s_max, 3),
            "frame_ms_median": round(self.frame_ms_median, 2),
            "rss_mb": None if self.rss_mb is None else round(self.rss_mb, 1),
            "private_mb": None if self.private_mb is None else round(self.private_mb, 1),
        }


def measure_latency(game: str, seed: int = 3, settle_time: float = 0.4) -> tuple[list, list]:
    """(latencies in s of every judged board change, wall ms of every frame) for one game."""
    table = SimulatedTable(scripted_game(game, seed=seed), seed=seed, fps=10.0)
    reports: list[Report] = []
    latencies: list[float] = []
    frame_ms: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        loop = RefereeLoop(
            table,
            Display(dummy(width=128, height=64, mode="1")),
            game=game,
            journal_dir=Path(tmp) / "journal",
            records_dir=Path(tmp) / "records",
            actions=table.next_action,
            on_report=reports.append,
            settle_time=settle_time,
        )
        while not table.finished:
            before = len(reports)
            start = time.perf_counter()
            loop.step()
            wall = time.perf_counter() - start
            frame_ms.append(wall * 1000.0)
            judged = [r for r in reports[before:] if r.outcome is not None]
            if judged and table.hand_left_at is not None and judged[0].t >= table.hand_left_at:
                latencies.append(judged[0].t - table.hand_left_at + wall)
            for event in table.take_events():
                loop.event(event)
        loop.close()
    return latencies, frame_ms


def run_peak_mb(
    game: str, extra: list[str] | None = None, seed: int = 3
) -> tuple[float, float | None]:
    """Peak resident and peak private memory (MB) of ``referee run [EXTRA]`` refereeing a whole
    synthetic game (:func:`peak_memory_mb`)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.toml"
        config.write_text(
            f'[camera]\nsource = "synthetic"\nfps = 10.0\nsynthetic_game = "{game}"\n'
            f'seed = {seed}\n[display]\ndriver = "dummy"\n'
            f'[journal]\ndirectory = "{tmp}/journal"\nrecords = "{tmp}/records"\n',
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "firmware.cli", "run", "--game", game]
        command += ["--config", str(config), "--fps", "1000", *(extra or [])]
        return peak_memory_mb(command)


def peak_memory_mb(command: list[str]) -> tuple[float, float | None]:
    """Run ``command`` and return its peak resident memory (its own ``VmHWM``: ``getrusage``
    would also count the pages a child inherits from this process when it is forked) and the
    peak of its private memory (``Private_Clean`` + ``Private_Dirty`` of ``smaps_rollup``,
    sampled every 0.1 s while it runs; None where the kernel has no ``smaps_rollup``), in MB."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    status = Path(f"/proc/{child.pid}/status")
    rollup = Path(f"/proc/{child.pid}/smaps_rollup")
    peak_kb = 0
    private_kb: int | None = None
    while child.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb = max(peak_kb, int(line.split()[1]))
        with contextlib.suppress(OSError, ValueError):
            own = sum(
                int(line.split()[1])
                for line in rollup.read_text().splitlines()
                if line.startswith(("Private_Clean:", "Private_Dirty:"))
            )
            private_kb = max(private_kb or 0, own)
        time.sleep(0.1)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, command)
    return peak_kb / 1024, None if private_kb is None else private_kb / 1024


def cmd_bench_loop(args: argparse.Namespace) -> int:
    """Entry point of ``referee bench loop``."""
    game = args.game or "gobblet"
    latencies, frame_ms = measure_latency(game)
    extra = [] if args.models is None else ["--models", args.models]
    rss, private = (None, None) if args.no_memory else run_peak_mb(game, extra)
    result = LoopBench(
        game,
        len(latencies),
        statistics.median(latencies),
        max(latencies),
        statistics.median(frame_ms),
        rss,
        private,
    )
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(
            f"{game}: {result.moves} verdicts, hand gone -> verdict on screen median "
            f"{result.latency_s_median:.3f} s, max {result.latency_s_max:.3f} s at 10 fps; "
            f"{result.frame_ms_median:.1f} ms per frame"
            + ("" if rss is None else f"; referee run peak memory {rss:.0f} MB")
            + ("" if private is None else f" ({private:.0f} MB its own)")
        )
    return 0
