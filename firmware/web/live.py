"""The referee loop's side of the live page: what the page shows, built after every change.

:class:`LiveFeed` is given to :class:`~firmware.loop.RefereeLoop` (``feed=``); the loop calls
:meth:`LiveFeed.observe` after every frame and button press. The feed compares a small key (phase,
last verdict, occlusion, number of actions) with the previous one and only when it changed builds
the state (a dict, :func:`snapshot`) and hands it to ``sink`` (the server's ``publish``, which only
queues it for the server's own thread). The loop never waits for the page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine import AMBIGUOUS, Move

from ..diagram import draw
from ..records import MoveLog

if TYPE_CHECKING:
    import numpy as np

    from vision.locate import BoardPose
    from vision.pipeline import FrameResult

    from ..loop import RefereeLoop

Sink = Callable[[dict[str, Any], dict[str, Any] | None], None]


@dataclass(frozen=True)
class CameraView:
    """The latest frame in which the board was found, and where it was (rectified on request)."""

    frame: np.ndarray
    pose: BoardPose
    t: float
    seq: int


class LiveFeed:
    """Turns the loop's situation into the page's state; ``sink(state, record)`` receives it.
    :attr:`state` is the last state built, on the loop's side (the server's copy may lag)."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.camera: CameraView | None = None
        self.state: dict[str, Any] | None = None
        self._key: tuple[Any, ...] | None = None
        self._occluded = False
        self._seq = 0
        self._log = MoveLog()

    def observe(
        self,
        loop: RefereeLoop,
        frame: np.ndarray | None = None,
        result: FrameResult | None = None,
    ) -> None:
        """Called by the loop after a frame (``frame``, ``result``) or a button press."""
        if result is not None:
            self._occluded = result.status == "occluded"
            if frame is not None and result.pose is not None:
                seq = self.camera.seq + 1 if self.camera else 1
                self.camera = CameraView(frame, result.pose, result.t, seq)
        referee = loop.referee
        history = len(referee.game.history) if referee is not None else -1
        key = (
            loop.phase,
            loop.last_outcome,
            self._occluded,
            loop.status,
            loop.game_name,
            history,
            referee.game if referee else None,
            loop.question,
            loop.offering_clear,
            loop.unset,
            loop.offered,
        )
        if key == self._key:
            return
        self._key = key
        self._seq += 1
        self.state = snapshot(loop, self._occluded, self._log, self._seq)
        record = referee.game.to_record() if referee is not None else None
        self.sink(self.state, record)


def snapshot(loop: RefereeLoop, occluded: bool, log: MoveLog, seq: int) -> dict[str, Any]:
    """The page's state: the documented keys of ``GET /api/state`` and what the page draws."""
    referee = loop.referee
    outcome = loop.last_outcome
    illegal = None
    if loop.illegal is not None:
        offered = loop.offered
        illegal = {
            "reason": loop.illegal.reason,
            "cells": list(loop.illegal.cells),
            "offer": str(offered) if offered is not None else None,
        }
    question = None
    if loop.question is not None:
        text, ok, menu = loop.question
        question = {"question": text, "ok": ok, "menu": menu, "more": loop.more_options}
    problem = None  # a reading the rules cannot judge, or a board not set up ("check the board")
    if loop.unset is not None:
        problem = {"reason": loop.unset.reason, "cells": list(loop.unset.cells), "setup": True}
    elif outcome is not None and outcome.verdict.kind == AMBIGUOUS and illegal is None:
        problem = {"reason": outcome.verdict.reason, "cells": list(outcome.verdict.cells)}
    state: dict[str, Any] = {
        "seq": seq,
        "time": round(time.time(), 3),
        "game": loop.game_name,
        "phase": loop.phase.value,
        "status": loop.status,
        "occluded": occluded,
        "clear_offered": loop.offering_clear,
        "illegal": illegal,
        "question": question,
        "problem": problem,
        "players": [],
        "scores": {},
        "to_move": None,
        "moves": [],
        "log": [],
        "over": False,
        "winner": None,
        "last": None,
        "diagram": None,
    }
    if referee is None:
        return state
    game = referee.game
    entries = log.update(game)
    last_move = next((a for a in reversed(game.history) if isinstance(a, Move)), None)
    highlight = illegal["cells"] if illegal else ()
    state.update(
        players=list(game.players),
        scores=game.scores,
        to_move=game.to_move,
        moves=[e.action for e in entries if e.is_move],
        log=[e.to_json() for e in entries],
        over=game.is_over,
        winner=game.winner,
        last=outcome.to_json() if outcome is not None else None,
        diagram=draw(game, highlight, last_move.cells() if last_move else ()).to_svg(),
    )
    return state
