"""Engine benchmark: inference time per observation and random playouts per second, per game.

Both numbers run the real code path: an observation (the JSON a camera would report after a
random legal move) goes through ``observation_from_json`` -> ``infer`` -> ``play``, exactly as
``referee replay`` does; playouts are random legal games played with ``random_move``/``play``.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from .core import MOVE, Event, Game
from .games import new_game

BENCH_GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")


@dataclass(frozen=True)
class EngineBench:
    """One game's figures."""

    game: str
    infer_ms_median: float
    infer_ms_p95: float
    observations: int
    playouts_per_s: float
    playouts: int

    def to_json(self) -> dict[str, float | int]:
        """The per-game object of ``referee bench engine --json``."""
        return {
            "infer_ms_median": round(self.infer_ms_median, 4),
            "infer_ms_p95": round(self.infer_ms_p95, 4),
            "observations": self.observations,
            "playouts_per_s": round(self.playouts_per_s, 2),
            "playouts": self.playouts,
        }


def _step(game: Game, action: object) -> None:
    if isinstance(action, Event):
        game.handle(action)
    else:
        game.play(action)  # type: ignore[arg-type]


def time_inference(name: str, games: int, seed: int, options: dict | None = None) -> list[float]:
    """Milliseconds of parse+infer+play for every observed move of ``games`` random games."""
    rng = random.Random(seed)
    times: list[float] = []
    for _ in range(games):
        game = new_game(name, **(options or {}))
        while not game.is_over:
            action = game.random_move(rng)
            if isinstance(action, Event):
                game.handle(action)
                continue
            game.play(action)
            seen = game.observation_to_json(game.current_observation())
            game.undo()
            start = time.perf_counter()
            verdict = game.infer(game.observation_from_json(seen))
            if verdict.kind == MOVE and verdict.move is not None:
                game.play(verdict.move)
            times.append((time.perf_counter() - start) * 1000.0)
            if verdict.kind != MOVE or verdict.move != action:
                raise AssertionError(
                    f"{name}: {action} was judged {verdict.kind}: {verdict.reason}"
                )
    return times


def time_playouts(
    name: str, seconds: float, seed: int, options: dict | None = None
) -> tuple[int, float]:
    """(playouts completed, elapsed seconds) of random legal games for about ``seconds``."""
    rng = random.Random(seed)
    done = 0
    start = time.perf_counter()
    while True:
        game = new_game(name, **(options or {}))
        while not game.is_over:
            _step(game, game.random_move(rng))
        done += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done, elapsed


def bench_game(name: str, games: int = 20, seconds: float = 2.0, seed: int = 2026) -> EngineBench:
    """Measure one game."""
    times = time_inference(name, games, seed)
    done, elapsed = time_playouts(name, seconds, seed)
    ordered = sorted(times)
    return EngineBench(
        game=name,
        infer_ms_median=statistics.median(ordered),
        infer_ms_p95=ordered[int(0.95 * (len(ordered) - 1))],
        observations=len(ordered),
        playouts_per_s=done / elapsed,
        playouts=done,
    )
