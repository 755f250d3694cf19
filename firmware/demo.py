"""``referee demo``: a simulated game night, no hardware needed.

Plays a scripted game of each game (see :mod:`firmware.scenario`) through the referee and
prints every verdict and the final scores. Exits non-zero if the referee's verdict ever differs
from what the script's players did (a flagged legal move or an accepted illegal one).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from engine import Referee
from engine.referee import describe

from .scenario import scripted_game

DEMO_GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus")


@dataclass(frozen=True)
class DemoResult:
    """What one game of the demo ended with."""

    game: str
    steps: int
    mismatches: int
    scores: dict[str, int]
    winner: str | None
    seconds: float


def play_demo_game(name: str, seed: int = 7, echo: bool = True) -> DemoResult:
    """Play one scripted game through the referee; print each verdict when ``echo``."""
    start = time.perf_counter()
    script = scripted_game(name, seed=seed)
    referee = Referee(name, **script.options)
    mismatches = 0
    for number, step in enumerate(script.steps, 1):
        outcome = referee.feed(step.item)
        ok = outcome.verdict.kind == step.expect
        mismatches += not ok
        if echo:
            flag = "" if ok else f"   <-- expected {step.expect}"
            print(f"  {number:3d} {describe(outcome)}{flag}", flush=True)
    game = referee.game
    return DemoResult(
        name, len(script.steps), mismatches, game.scores, game.winner, time.perf_counter() - start
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """Entry point of ``referee demo``."""
    names = [args.game] if args.game else list(DEMO_GAMES)
    failed = 0
    for name in names:
        print(f"== {name} ==", flush=True)
        result = play_demo_game(name, seed=args.seed, echo=not args.quiet)
        scores = ", ".join(f"{p} {s}" for p, s in result.scores.items())
        print(
            f"== {name}: final scores {scores}; winner {result.winner}; "
            f"{result.steps} steps in {result.seconds:.1f} s",
            flush=True,
        )
        if result.mismatches:
            print(f"!! {result.mismatches} verdicts differed from the script", flush=True)
            failed += 1
    return 1 if failed else 0
