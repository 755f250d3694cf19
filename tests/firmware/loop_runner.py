"""Runs a simulated game through the referee loop with a journal in ``sys.argv[1]`` and prints
``ACCEPTED <move>`` after each accepted move (the loop journals before it reports). Used by the
kill -9 test, which kills this process at a random moment."""

import sys
from pathlib import Path

from luma.core.device import dummy

from firmware.display import Display
from firmware.loop import RefereeLoop, Report
from firmware.scenario import scripted_game
from firmware.simulator import SimulatedTable


def main() -> None:
    journal = Path(sys.argv[1])
    script = scripted_game("gobblet", seed=int(sys.argv[2]))
    table = SimulatedTable(script, seed=3, hand_frames=2, still_frames=6)

    def report(r: Report) -> None:
        if r.outcome is not None and r.outcome.verdict.kind == "move":
            print(f"ACCEPTED {r.outcome.verdict.move}", flush=True)

    loop = RefereeLoop(
        table,
        Display(dummy(width=128, height=64, mode="1")),
        game="gobblet",
        journal_dir=journal,
        records_dir=journal / "records",
        actions=table.next_action,
        on_report=report,
    )
    while not table.finished:
        loop.step()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
