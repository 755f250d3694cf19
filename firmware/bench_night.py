"""``referee bench night``: whole games refereed by the real loop, the players doing as they would.

``bench table`` reads every board of a filmed game and then calibrates the reader on its truth,
as if the players put every misread right; it judges each board as the loop would, by a copy of
the loop's rule. This benchmark runs the loop itself (:class:`~firmware.loop.RefereeLoop`:
settling, vision, the rules, questions, flags, calibration, undo) over a scripted game filmed by
the simulated table (:mod:`firmware.simulator`: a hand over the board for every move, then the
board in view for :data:`STILL_FRAMES` frames at :data:`FPS` a second) in one split's domain,
and the players (:class:`~firmware.players.HonestPlayers`) press only what the screen asks of
them: they answer questions with what they did, take an offered move when it is theirs, say the
board is clear when the referee waits for a hand that is not there and set up when it finds
the board they set up not set up, undo a move the referee accepted that is not theirs (once
a move) and say a move judged "no change" was missed (OK in play, once a move); ``unaided``
counts the moves right without a press, and a move may count under more than one of the
others. At the end of each board's still frames the referee
must show what is on the table: the move accepted (``moves_right``, split by what the players
had to press: ``unaided``, ``asked``, ``offered``, ``said_clear``, ``said_missed``,
``undone``), the illegal
placement flagged (``illegal_flagged``; ``illegal_let_stand``: a move or no change accepted on
it; neither loses the night, whose next board, the placement taken back, must be accepted), the
board taken back accepted. ``moves_wrong`` counts the moves it accepted that were not
the move made (each undone by the players). A board whose end finds the referee showing
anything else (the opening board too) loses the night: it stops there (the players would have
to help the referee by hand), ``lost`` counts such nights, ``lost_as`` what the referee showed
instead, and the table's moves after it are ``not_reached``; ``to_the_end`` counts the rest.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from luma.core.device import dummy

from engine import ILLEGAL, NO_CHANGE

from .display import HEIGHT, WIDTH, Display
from .loop import Phase, RefereeLoop, board_json
from .players import HonestPlayers
from .scenario import TABLE_OPTIONS, Script, Step, scripted_game
from .simulator import SimulatedTable

if TYPE_CHECKING:
    from vision.synth import Domain

#: Frames a second the simulated camera films.
FPS = 10.0
#: Frames each board stays in view, still, before the next thing the players do (1.6 s).
STILL_FRAMES = 16


@dataclass
class NightTally:
    """One game's counts over its tables."""

    tables: int = 0
    to_the_end: int = 0
    moves: int = 0
    right: int = 0
    wrong: int = 0
    lost: int = 0
    not_reached: int = 0
    illegal: int = 0
    illegal_flagged: int = 0
    illegal_let_stand: int = 0
    frames: int = 0
    seconds: float = 0.0
    #: moves right, by what the players pressed for them (``unaided``: nothing)
    aided: Counter[str] = field(default_factory=Counter)
    lost_as: Counter[str] = field(default_factory=Counter)
    presses: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict:
        """The ``--json`` figures."""
        return {
            "tables": self.tables,
            "to_the_end": self.to_the_end,
            "moves": self.moves,
            "moves_right": self.right,
            "unaided": self.aided["unaided"],
            "asked": self.aided["answer"],
            "offered": self.aided["offer"],
            "said_clear": self.aided["clear"],
            "said_missed": self.aided["missed"],
            "undone": self.aided["undo"],
            "moves_wrong": self.wrong,
            "lost": self.lost,
            "lost_as": dict(sorted(self.lost_as.items())),
            "not_reached": self.not_reached,
            "illegal_placements": self.illegal,
            "illegal_flagged": self.illegal_flagged,
            "illegal_let_stand": self.illegal_let_stand,
            "presses": sum(self.presses.values()),
            "frames": self.frames,
            "seconds": round(self.seconds, 1),
        }


def _shown_as(loop: RefereeLoop, players: HonestPlayers, before: object) -> str:
    """What the referee shows when it does not show what is on the table (``before``: its last
    outcome when the players began this board)."""
    if loop.phase is Phase.CONFIRM:
        return "question"
    if loop.phase is Phase.ILLEGAL:
        return "illegal"
    if loop.phase in (Phase.FIND_BOARD, Phase.CHECK_BOARD):
        return loop.phase.value
    if players.step_wrong:
        return "wrong move"
    if loop.offering_clear:
        return "hand over the board"
    if players.step_presses["answer"]:
        return "question"  # asked, and neither option was what they did
    outcome = loop.last_outcome
    if outcome is None or outcome is before:
        return "nothing judged"
    return outcome.verdict.kind


class _Night:
    """One table's game night: the loop, the players and the tally they add to."""

    def __init__(self, table: SimulatedTable, loop: RefereeLoop, tally: NightTally) -> None:
        self.table = table
        self.loop = loop
        self.tally = tally
        self.players = HonestPlayers(loop, table)
        #: the loop's last outcome when the players began the board being judged
        self.before = loop.last_outcome

    def shows_the_table(self) -> bool:
        """Whether the referee accepts the board on the table, with nothing pending."""
        assert self.loop.referee is not None
        game = self.loop.referee.game
        shown = board_json(game, game.view()) == self.table.board
        return self.loop.phase in (Phase.PLAY, Phase.GAME_OVER) and shown

    def judge(self, step: Step | None) -> bool:
        """Count the referee's answer to ``step`` (None: the opening board) at the end of its
        still frames; False when it lost the game night."""
        if step is None or step.expect != ILLEGAL:
            shown = self.loop.referee is not None and self.shows_the_table()
            if step is not None and step.expect == "move":
                self.tally.moves += 1
                self.tally.right += shown
                if shown:
                    pressed = [why for why, n in self.players.step_presses.items() if n]
                    self.tally.aided.update(pressed or ["unaided"])
            self.tally.wrong += self.players.step_wrong
            if not shown:
                self.tally.lost += 1
                self.tally.lost_as[_shown_as(self.loop, self.players, self.before)] += 1
            return shown
        self.tally.illegal += 1
        self.tally.wrong += self.players.step_wrong
        flagged = self.loop.phase is Phase.ILLEGAL and not self.players.step_wrong
        outcome = self.loop.last_outcome
        let_stand = bool(self.players.step_wrong) or (
            self.loop.phase is Phase.PLAY
            and outcome is not None
            and outcome is not self.before
            and outcome.verdict.kind == NO_CHANGE
        )
        self.tally.illegal_flagged += flagged
        self.tally.illegal_let_stand += let_stand
        return True

    def _next(self) -> None:
        """The players go on to the next thing of their game."""
        self.players.new_step()
        self.before = self.loop.last_outcome

    def play(self) -> None:
        """Film, referee and judge the whole script, or until the night is lost."""
        step: Step | None = None
        moves = [s for s in self.table.script.steps if s.expect == "move"]
        reached = 0
        while not self.table.finished:
            self.loop.step()
            self.tally.frames += 1
            self.players.act()
            beat = self.table.beat
            if beat is None or not self.table.beat_shown:
                continue
            if beat.step is not None:
                step = beat.step
                if step.is_event:
                    self._next()
                continue
            if beat.hand:
                continue
            reached += step is not None and step.expect == "move"
            if not self.judge(step):
                self.tally.not_reached += len(moves) - reached
                return
            self._next()
        self.tally.to_the_end += 1


def night_table(
    script: Script,
    seed: int,
    tally: NightTally,
    domain: Domain | None = None,
    spp: int | None = None,
    fresh_noise: bool = False,
) -> None:
    """Referee ``script`` filmed at one table of ``domain`` (camera, light and box drawn from
    ``seed``; path-traced at ``spp`` samples a pixel when given; every frame with sensor noise
    of its own when ``fresh_noise``), adding to ``tally``."""
    start = time.perf_counter()
    game = script.game
    table = SimulatedTable(
        script,
        seed=seed,
        fps=FPS,
        still_frames=STILL_FRAMES,
        domain=domain,
        spp=spp,
        fresh_noise=fresh_noise,
    )
    with tempfile.TemporaryDirectory() as tmp:
        loop = RefereeLoop(
            table,
            Display(dummy(width=WIDTH, height=HEIGHT, mode="1")),
            game=game,
            options=script.options,
            journal_dir=Path(tmp) / "journal",
            records_dir=Path(tmp) / "records",
            actions=table.next_action,
            events=table.take_events,
        )
        night = _Night(table, loop, tally)
        try:
            night.play()
        finally:
            loop.close()
    tally.tables += 1
    tally.presses.update(night.players.presses)
    tally.seconds += time.perf_counter() - start


def bench_night(
    game: str, tables: int, seed: int, split: str, fresh_noise: bool = False
) -> NightTally:
    """``tables`` game nights of ``game`` in ``split``'s domain (``fresh_noise``: each frame
    with sensor noise of its own, :class:`~firmware.simulator.SimulatedTable`)."""
    import cv2

    from vision.bench import TRACED_SPLITS, TRACED_SPP, split_domain

    cv2.setNumThreads(1)
    tally = NightTally()
    domain = split_domain(split, game)
    spp = TRACED_SPP if split in TRACED_SPLITS else None
    for t in range(tables):
        key = zlib.crc32(f"night/{split}/{seed}/{game}/{t}".encode())
        script = scripted_game(game, seed=key, **TABLE_OPTIONS.get(game, {}))
        night_table(script, key, tally, domain, spp, fresh_noise)
    return tally


def cmd_bench_night(args: argparse.Namespace) -> int:
    """``referee bench night``: ``--json`` prints ``{"games": {...}, "heldout": {...}}`` as
    ``bench table`` does (``games``: the corpus's nominal look)."""
    from vision.bench import bench_splits

    return bench_splits(
        args,
        lambda game, split: bench_night(game, args.tables, args.seed, split, args.fresh_noise),
        _line,
    )


def _line(tally: NightTally) -> str:
    """One game's figures, in a line."""
    r = tally.to_json()
    lost = ", ".join(f"{k} {v}" for k, v in r["lost_as"].items()) or "none"
    return (
        f"to the end {r['to_the_end']} of {r['tables']}  "
        f"moves right {r['moves_right']} of {r['moves']} (unaided {r['unaided']}, "
        f"asked {r['asked']}, offered {r['offered']}, said clear {r['said_clear']}, "
        f"said missed {r['said_missed']}, undone {r['undone']}), wrong {r['moves_wrong']}; "
        f"lost {r['lost']} ({lost}), not reached {r['not_reached']}; "
        f"illegal flagged {r['illegal_flagged']} of {r['illegal_placements']}, "
        f"let stand {r['illegal_let_stand']}; presses {r['presses']}"
    )
