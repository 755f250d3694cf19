"""``referee bench web``: verdict-to-page latency with many viewers, some of whom never read.

A scripted game is filmed by the simulated table and refereed by the real loop (vision, engine,
screens on luma's dummy device, journal) as fast as it goes, with the live page's server on an
ephemeral local port. ``clients`` event streams are open: ``stalled`` of them never read a byte
after the headers (their receive buffers are 4 kB), the others read everything as it comes. For
every state the loop publishes (every verdict, turn, hand over the board...), latency = the time
a reading viewer has its last byte - the time the loop built the state right after the verdict
(one clock, one machine). The loop's own cost of the page is the time spent in
``feed.observe`` per frame; and the same game is refereed first with no viewer at all, so that
the loop's frame times and the process's peak memory with and without the 20 viewers can be
compared. Unless ``--no-memory``, ``referee run`` refereeing the synthetic game is started
twice, without and with ``--web``, and each one's peak resident memory is read back.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import resource
import socket
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from luma.core.device import dummy

from ..bench_loop import run_peak_mb
from ..display import Display
from ..loop import RefereeLoop
from ..scenario import TABLE_OPTIONS, scripted_game
from ..simulator import SimulatedTable
from .server import WebServer

#: The verdict-to-page budget of the issue, in seconds.
BUDGET_S = 0.5


class Viewer(threading.Thread):
    """An event stream reader: the arrival time of every state, by ``seq``."""

    def __init__(self, port: int, *, reads: bool = True) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket()
        if not reads:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: bench\r\n\r\n")
        self.reads = reads
        self.arrivals: dict[int, tuple[float, float]] = {}  # seq -> (state time, arrival)

    def run(self) -> None:
        if not self.reads:
            return
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(1 << 16):
                now = time.time()
                buffer += chunk
                while b"\n\n" in buffer:
                    event, buffer = buffer.split(b"\n\n", 1)
                    for line in event.split(b"\n"):
                        if line.startswith(b"data: "):
                            state = json.loads(line[6:])
                            self.arrivals[state["seq"]] = (state["time"], now)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class TimedFeed:
    """The server's feed, with the time the loop spends in it."""

    def __init__(self, feed: Any) -> None:
        self.feed = feed
        self.ms: list[float] = []

    def observe(self, loop: Any, frame: Any = None, result: Any = None) -> None:
        start = time.perf_counter()
        self.feed.observe(loop, frame, result)
        self.ms.append((time.perf_counter() - start) * 1000)


@dataclass(frozen=True)
class WebBench:
    """The figures of ``referee bench web``."""

    game: str
    clients: int
    stalled: int
    states: int
    latency_s_median: float
    latency_s_p95: float
    latency_s_max: float
    missed: int
    dropped: int
    feed_ms_median: float
    feed_ms_max: float
    frame_ms_p50_alone: float
    frame_ms_p95_alone: float
    frame_ms_p50_viewed: float
    frame_ms_p95_viewed: float
    rss_mb_alone: float
    rss_mb_viewed: float
    run_mb: float | None = None
    run_web_mb: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``--json``."""
        out: dict[str, Any] = dict(self.__dict__)
        for key, value in out.items():
            if isinstance(value, float):
                out[key] = round(value, 4)
        out["budget_s"] = BUDGET_S
        return out


def _referee(game: str, seed: int, server: WebServer, tmp: Path) -> tuple[list, TimedFeed]:
    """Referee the scripted game with ``server``'s feed: the wall ms of every frame, the feed."""
    script = scripted_game(game, seed=seed, **TABLE_OPTIONS.get(game, {}))
    table = SimulatedTable(script, seed=seed, fps=10.0)
    feed = TimedFeed(server.feed)
    loop = RefereeLoop(
        table,
        Display(dummy(width=128, height=64, mode="1")),
        game=game,
        options=script.options,
        journal_dir=tmp / "journal",
        records_dir=tmp / "records",
        actions=table.next_action,
        feed=feed,
    )
    frame_ms = []
    while not table.finished:
        start = time.perf_counter()
        loop.step()
        for event in table.take_events():
            loop.event(event)
        frame_ms.append((time.perf_counter() - start) * 1000)
    loop.close()
    return frame_ms, feed


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def bench_web(game: str, clients: int = 20, stalled: int = 5, seed: int = 3) -> WebBench:
    """Referee one scripted game alone, then with ``clients`` viewers on the page (``stalled``
    of them never reading)."""
    with tempfile.TemporaryDirectory() as tmp:
        with WebServer("127.0.0.1", 0, records_dir=Path(tmp) / "a") as server:
            alone, _ = _referee(game, seed, server, Path(tmp) / "a")
        rss_alone = _peak_rss_mb()
        with WebServer("127.0.0.1", 0, records_dir=Path(tmp) / "b") as server:
            viewers = [Viewer(server.port, reads=i >= stalled) for i in range(clients)]
            for viewer in viewers:
                viewer.start()
            time.sleep(0.5)  # every stream is open before the game starts
            viewed, feed = _referee(game, seed, server, Path(tmp) / "b")
            time.sleep(1.0)  # the last states reach the viewers
            dropped = server.hub.dropped
            for viewer in viewers:
                viewer.close()
        rss_viewed = _peak_rss_mb()
    readers = [v for v in viewers if v.reads]
    sent = max((max(v.arrivals, default=0) for v in readers), default=0)
    latencies = [arrival - built for v in readers for built, arrival in v.arrivals.values()]
    missed = sum(1 for v in readers for seq in range(2, sent + 1) if seq not in v.arrivals)
    return WebBench(
        game,
        clients,
        stalled,
        sent,
        statistics.median(latencies),
        _quantile(latencies, 0.95),
        max(latencies),
        missed,
        dropped,
        statistics.median(feed.ms),
        max(feed.ms),
        statistics.median(alone),
        _quantile(alone, 0.95),
        statistics.median(viewed),
        _quantile(viewed, 0.95),
        rss_alone,
        rss_viewed,
    )


def _peak_rss_mb() -> float:
    """This process's peak resident set size so far (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cmd_bench_web(args: argparse.Namespace) -> int:
    """Entry point of ``referee bench web``: prints the figures; exit 1 over the budget."""
    game = args.game or "blokus-duo"
    result = bench_web(game, clients=args.clients, stalled=args.stalled)
    if not args.no_memory:
        result = dataclasses.replace(
            result,
            run_mb=run_peak_mb(game)[0],
            run_web_mb=run_peak_mb(game, ["--web", "127.0.0.1:0"])[0],
        )
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(
            f"{result.game}: {result.states} states to {result.clients} viewers "
            f"({result.stalled} never reading): verdict to page median "
            f"{result.latency_s_median * 1000:.1f} ms, p95 {result.latency_s_p95 * 1000:.1f} ms, "
            f"max {result.latency_s_max * 1000:.1f} ms (budget {BUDGET_S * 1000:.0f} ms); "
            f"{result.missed} states missed by readers, {result.dropped} viewers dropped; "
            f"the loop spends median {result.feed_ms_median:.2f} ms, max "
            f"{result.feed_ms_max:.1f} ms a frame on the page; loop frame median/p95 "
            f"{result.frame_ms_p50_alone:.1f}/{result.frame_ms_p95_alone:.1f} ms with no viewer, "
            f"{result.frame_ms_p50_viewed:.1f}/{result.frame_ms_p95_viewed:.1f} ms with "
            f"{result.clients}; peak memory {result.rss_mb_alone:.0f} MB with no viewer, "
            f"{result.rss_mb_viewed:.0f} MB after the viewers (the viewers' threads included)"
            + (
                ""
                if result.run_mb is None
                else f"; referee run peak memory {result.run_mb:.0f} MB, "
                f"with --web {result.run_web_mb:.0f} MB"
            )
        )
    return 0 if result.latency_s_max <= BUDGET_S and result.missed == 0 else 1
