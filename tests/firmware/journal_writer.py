"""Run as a process by the journal tests: referees an endless seeded toy stream, journaling every
accepted move and event, and prints each journal line once it is on disk (an acknowledgement).

    python -m tests.firmware.journal_writer JOURNAL SEED
"""

from __future__ import annotations

import json
import sys

from engine import Referee
from firmware.journal import Journal, entry
from tests.firmware import toygame


def main(path: str, seed: int) -> None:
    """Write until killed."""
    toygame.register()
    referee = Referee(toygame.NAME)
    journal = Journal.create(path, toygame.NAME, referee.defaults)
    for item in toygame.random_stream(seed, sys.maxsize):
        outcome = referee.feed(item)
        if journal.record(outcome):
            print(json.dumps(entry(outcome)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
