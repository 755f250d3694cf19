"""The referee loop: camera frames and button presses in, verdicts on the screen and in the journal.

A state machine, one :meth:`RefereeLoop.step` per camera frame::

    FIND_BOARD --board seen--> CHECK_BOARD --board matches the game--> PLAY <--> ILLEGAL
                                                                       |   <--> CONFIRM
                                                                       +--> GAME_OVER

- FIND_BOARD: no board yet (or lost): "board not found" with a hint. When no game was chosen,
  the game is the one whose markers are seen.
- CHECK_BOARD: the first settled view must be the game's accepted state (an empty board, the
  opening, or the resumed game), or one legal move on from it; until it is, the screen says
  what is wrong ("CHECK BOARD", the reason and the cells), with "OK if set up": vision may have
  misread the board, before it knows this table's light, and CONFIRM accepts it as the game's
  accepted state (and calibrates vision on it, as on any accepted board).
- PLAY: every settled observation is decoded with the rules and judged. A move is journalled
  (durably) *before* the screen shows it. CONFIRM with nothing offered says "you missed my
  move": the next still frame is read afresh and "Which move?" asks about its likeliest legal
  moves ("no move" last), or "No move seen" is shown.
- ILLEGAL: an illegal placement flashes the reason and the cells, the buzzer beeps, and nothing
  else is accepted until the board is put back (no-change) or the last move is undone. When
  vision read the board surer than any legal explanation (``vision.decode``), the screen also
  offers the likeliest legal move ("OK if it was ..."): if the players did make it and vision
  misread the board, CONFIRM accepts that move.
- CONFIRM: vision and rules left two explanations close, or an illegal act likelier than the
  best legal explanation but not by the illegal margin ("What was done?": that explanation or
  "illegal at" the act's first cell and how many more; ``vision.decode``, ``Decoded.doubt``);
  CONFIRM takes the first, MENU the second (an illegal act is then flagged as ILLEGAL), UNDO
  neither: "Which move?" then shows the next two likeliest legal explanations
  (``Decoded.ranked``, "UNDO: others" while there are more), and at the last ones, or for
  "What was done?", the board is looked at again. A move the players undid that vision then
  reads again from the same board is not accepted again: "Which move?" puts the other likeliest
  legal explanations to them.
- GAME_OVER: the winner; the record is saved; MENU -> "new game" starts again.

A still board that vision finds something over (``vision.pipeline.STILL_OCCLUDED``) keeps the
"hand over the board" screen up, with "OK if it is clear": the model may take a clear board's
look for a hand (an odd lamp, a blurred camera), or a far marker go unread on a board nobody
touches, and the referee would wait for ever. CONFIRM
there (in PLAY, CHECK_BOARD, or ILLEGAL: the illegal placement put right, and its offer is off
the screen while the hand screen is up) has the next settled frame read as clear and judged as
usual.

The menu's "shut down" asks for CONFIRM first; then :attr:`RefereeLoop.shutdown_requested` is
set and :meth:`RefereeLoop.run` returns (``referee run`` exits with its shutdown status, and the
systemd unit powers the Pi off). Once the board is calibrated the loop asks the camera to lock
its exposure and white balance (``camera.lock_exposure()``, when the camera has it).

While the mat's markers look smaller than ``vision.locate.RELIABLE_MARKER_PX``, the status line
of every screen says that the camera is too far (unless the camera has something to say); while
some are read only in linear light or eroded (``BoardPose.markers_bled``), that the mat is too
bright; while some are found only from their outlines (``BoardPose.markers_registered``), that
they are blurred; once the accepted boards have contradicted the reader's reads at this table
beyond chance (``FrameResult.reads_unsure``, :mod:`vision.adapt`), that the light makes the
pieces hard to read. Each line is held a few seconds after the last frame that showed its cause
(:class:`firmware.view_status.ViewStatus`), so that it does not flicker with the camera's noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from engine import (
    AMBIGUOUS,
    EVENT,
    ILLEGAL,
    MOVE,
    NO_CHANGE,
    Event,
    Game,
    Move,
    Observation,
    Outcome,
    Referee,
    Verdict,
)
from engine.referee import describe
from vision.decode import Decoded, Opening, close_margin, decode
from vision.pipeline import (
    MOVING,
    NO_BOARD,
    OCCLUDED,
    SETTLED,
    STILL_OCCLUDED,
    FrameResult,
    VisionPipeline,
)

from . import screens
from .actions import Action, Menu, MenuItem
from .camera import ENDED
from .journal import CURRENT, Journal, JournalError, save_record
from .lock import JournalLock, claim
from .recorder import FrameRecorder
from .view_status import ViewStatus


class Phase(Enum):
    """Where the referee loop is."""

    FIND_BOARD = "find board"
    CHECK_BOARD = "check board"
    PLAY = "play"
    ILLEGAL = "illegal"
    CONFIRM = "confirm"
    GAME_OVER = "game over"


@dataclass(frozen=True)
class Report:
    """Something worth telling (a verdict, a state change), for logs and the demo's printout."""

    t: float
    phase: Phase
    text: str
    outcome: Outcome | None = None


@dataclass
class _Pending:
    """Explanations of a settled board waiting for the players' choice: two close ones, or the
    likeliest legal move offered beside an illegal placement."""

    frame: np.ndarray
    result: FrameResult
    options: list[Any] = field(default_factory=list)
    #: The question put to the players, as the screen asks it: (question, OK's option, MENU's).
    question: tuple[str, str, str] | None = None


def board_after(game: Game, pick: Move | Opening | Observation | None) -> dict[str, Any]:
    """The board the players say ``pick`` left, a question's option: the accepted state after
    a move (None: no change; an :class:`~vision.decode.Opening`: another player's first move),
    or the cells of an illegal act's observation."""
    if isinstance(pick, Observation):
        return dict(pick.cells)
    view = dict(game.view())
    if isinstance(pick, Opening):
        view.update(pick.changes)
    elif pick is not None:
        view.update(game.changes_after(pick))
    return view


def board_json(game: Game, cells: dict[str, Any]) -> dict[str, Any]:
    """``cells`` (contents by cell name; a cell left out is empty) as observation JSON, on
    every cell of ``game``."""
    return {n: game.cell_to_json(cells.get(n)) for n in game.view()}


class RefereeLoop:
    """Drives one appliance: ``camera.read()`` -> vision -> engine -> ``display.show``.

    ``actions`` is a callable returning the next queued :class:`Action` or ``None`` (GPIO buttons'
    ``read``, or a keyboard/simulator); ``events`` one returning button events with data typed
    in (the simulated table's), applied after each frame; ``alarm`` is optional (buzzer/LED).
    With ``frames_dir`` the frame of every accepted position is saved there with its truth
    (:mod:`.recorder`). The loop holds the journal's lock (:mod:`.lock`) until :meth:`close`:
    ``journal_lock`` when the caller took it already, else it takes it (``JournalLockError``).
    ``feed`` (optional, e.g. the live page's :class:`~firmware.web.live.LiveFeed`) is told after
    every frame and button press: ``feed.observe(loop, frame, result)``; it must not block.
    """

    #: Seconds without a board before the screen says so (a hand over every marker is brief).
    NOT_FOUND_GRACE = 1.0
    #: Seconds the last move stays on the screen before the scoreboard comes back.
    LAST_MOVE_SECONDS = 2.0

    def __init__(
        self,
        camera: Any,
        display: Any,
        *,
        game: str | None = None,
        options: dict[str, Any] | None = None,
        journal_dir: str | Path = "out/journal",
        records_dir: str | Path = "out/records",
        frames_dir: str | Path | None = None,
        journal_lock: JournalLock | None = None,
        actions: Callable[[], Action | None] | None = None,
        events: Callable[[], list[Event]] | None = None,
        alarm: Any = None,
        settle_time: float = 0.4,
        on_report: Callable[[Report], None] | None = None,
        feed: Any = None,
        web_url: str | None = None,
    ) -> None:
        self.camera = camera
        self.feed = feed
        self.web_url = web_url
        self._phone_page = False  # the QR code stays until the next button press
        self.display = display
        self.alarm = alarm
        self.actions = actions or (lambda: None)
        self.events = events or list
        self.on_report = on_report or (lambda report: None)
        self.journal_dir = Path(journal_dir)
        self.records_dir = Path(records_dir)
        # one referee per journal, and no game started that could not be saved
        self._lock = journal_lock or claim(self.journal_dir, self.records_dir)
        self.recorder = FrameRecorder(frames_dir) if frames_dir is not None else None
        self.game_name = game
        self.vision = VisionPipeline(game, settle_time=settle_time)
        self.menu = Menu.main()
        self.phase = Phase.FIND_BOARD
        self.referee: Referee | None = None
        self.journal: Journal | None = None
        self.status = ""
        self._view_status = ViewStatus()
        self.last_outcome: Outcome | None = None
        self._illegal: Verdict | None = None
        self._pending: _Pending | None = None
        #: the likeliest legal move, offered while an illegal placement is flagged
        self._offer: _Pending | None = None
        #: the board checked and found not set up for the game, and why (CHECK_BOARD)
        self._unset: tuple[_Pending, Verdict] | None = None
        #: the board (observation JSON) of the move the players undid: while vision reads the
        #: board so, it is not accepted again (:meth:`_judge`)
        self._undone: dict[str, Any] | None = None
        #: the players said a move was missed: the next board read is asked about
        self._missed = False
        self._lost_since: float | None = None
        #: vision found something over the still board, and no clear board has settled since
        self._still_occluded = False
        #: when the last move (or "no move seen") was shown: it stays a while
        self._move_shown_at = -1e9
        self._now = 0.0
        self.problems: tuple[str, ...] = ()
        #: the players confirmed "shut down" in the menu
        self.shutdown_requested = False
        self._asking_shutdown = False
        if game is not None:
            self._open_game(game, options)

    @property
    def illegal(self) -> Verdict | None:
        """The illegal placement waiting to be put right (``None`` when there is none)."""
        return self._illegal

    @property
    def offered(self) -> Move | Opening | None:
        """The likeliest legal move offered beside the illegal placement: CONFIRM accepts it,
        should vision have misread the board (``None`` when there is none, or while the screen
        offers "OK if it is clear" instead: :attr:`offering_clear`)."""
        if self.phase != Phase.ILLEGAL or self._offer is None or self.offering_clear:
            return None
        return self._offer.options[0]

    @property
    def unset(self) -> Verdict | None:
        """Why the board checked before play is not the game's accepted state, while the screen
        says so and offers "OK if set up" (``None`` otherwise)."""
        if self.phase != Phase.CHECK_BOARD or self._unset is None or self.offering_clear:
            return None
        return self._unset[1]

    @property
    def _asked(self) -> _Pending | None:
        """The question waiting for the players' answer on the CONFIRM screen (``None``)."""
        return self._pending if self.phase == Phase.CONFIRM else None

    @property
    def choices(self) -> tuple[Any, Any] | None:
        """What OK and MENU take on the CONFIRM screen: a move, ``None`` (no move) or an
        illegal act's observation each (``None`` when nothing is asked)."""
        if self._asked is None:
            return None
        first, second = self._asked.options[:2]
        return first, second

    @property
    def question(self) -> tuple[str, str, str] | None:
        """The question the CONFIRM screen puts to the players: the question, the option OK
        takes and the one MENU takes (``None`` when nothing is asked)."""
        return None if self._asked is None else self._asked.question

    @property
    def more_options(self) -> bool:
        """Whether UNDO on the CONFIRM screen shows the next two explanations ("UNDO: others")
        instead of looking at the board again."""
        return self._asked is not None and len(self._asked.options) > 2

    # ----------------------------------------------------------------- game set-up
    def _open_game(self, game: str, options: dict[str, Any] | None = None) -> None:
        """Resume the journalled game of ``game`` if there is one (``options`` None), else start
        a new one."""
        path = self.journal_dir / CURRENT
        if options is None and path.exists():
            try:
                resumed = Journal(path).resume()
            except JournalError as exc:
                self.problems = (str(exc),)
            else:
                if resumed.referee.game_name == game and resumed.referee.game.is_over:
                    self._archive(resumed.referee, resumed.started)
                    options = resumed.referee.defaults  # the next game as the last one began
                elif resumed.referee.game_name == game:
                    self.referee = resumed.referee
                    self.journal = Journal(path, resumed.started)
                    self.problems = tuple(str(p) for p in resumed.problems)
                    self.game_name = game
                    self._report(f"resumed {game}: {resumed.entries} journal entries")
                    for problem in self.problems:
                        self._report(f"journal {problem}")
                    return
        self._new_game(game, options or {})

    def _archive(self, referee: Referee, started: str) -> None:
        """Keep a finished game found in the journal as a record (once: the record it was saved
        as when it ended is replaced by the same), so that the journal can start a new one."""
        stem = record_stem(started, referee)
        saved = save_record(referee.game, self.records_dir, stem, replace=True)
        self._report(f"the journal's {referee.game_name} game was over: kept as {saved.record}")

    def _new_game(self, game: str, options: dict[str, Any]) -> None:
        if self.journal is not None:
            self.journal.close()
        self.referee = Referee(game, **options)
        self.journal = Journal.create(self.journal_dir / CURRENT, game, options)
        self.game_name = game
        self._report(f"new game of {game}")

    # ----------------------------------------------------------------- one frame
    def step(self) -> None:
        """Handle queued button presses, then one camera frame."""
        while (action := self.actions()) is not None:
            self.press(action)
        ok, frame, t = self.camera.read()
        self._now = t
        if self._asking_shutdown or self.shutdown_requested:
            return  # the shutdown question (or notice) stays on the screen; nothing is judged
        self._recorder_warning()
        self.status = getattr(getattr(self.camera, "status", None), "line", "")
        if not ok or frame is None:
            self._show_current()
            self.display.tick(t)
            self._observed()
            return
        result = self.vision.process(frame, t)
        # held steady over a few seconds
        view = self._view_status.update(result.pose, t, result.reads_unsure)
        self.status = self.status or view
        self._on_frame(frame, result)
        for event in self.events():
            self.event(event)
        self.display.tick(t)
        self._observed(frame, result)

    def _observed(self, frame: np.ndarray | None = None, result: FrameResult | None = None) -> None:
        """Tell the feed (the live page) what just happened."""
        if self.feed is not None:
            self.feed.observe(self, frame, result)

    def run(
        self,
        until: Callable[[], bool] | None = None,
        fps: float = 10.0,
        frames: int | None = None,
        heartbeat: Callable[[], None] | None = None,
    ) -> None:
        """Step until ``until()`` is true, ``frames`` frames were taken, a shutdown is confirmed,
        or a recording (file, folder, simulated table) ends, at most ``fps`` frames a second;
        ``heartbeat`` is called after every step (the systemd watchdog's ping: a loop that hangs
        stops calling it)."""
        period = 1.0 / fps
        taken = 0
        while (
            (until is None or not until())
            and (frames is None or taken < frames)
            and not self.shutdown_requested
        ):
            taken += 1
            start = time.monotonic()
            self.step()
            if heartbeat is not None:
                heartbeat()
            if getattr(getattr(self.camera, "status", None), "state", "") == ENDED:
                self._report("the recording ended")
                return
            time.sleep(max(0.0, period - (time.monotonic() - start)))

    def _on_frame(self, frame: np.ndarray, result: FrameResult) -> None:
        if result.status == NO_BOARD:
            self._still_occluded = False
            if self._lost_since is None:
                self._lost_since = result.t
            if result.t - self._lost_since >= self.NOT_FOUND_GRACE:
                if self.phase in (Phase.PLAY, Phase.CHECK_BOARD):
                    self.phase = Phase.FIND_BOARD
                self._show(screens.board_not_found(result.reason, status=self.status))
            return
        self._lost_since = None
        if self.referee is None and result.game is not None:
            self._open_game(result.game)
        if self.phase == Phase.FIND_BOARD:
            self.phase = Phase.CHECK_BOARD
            self._unset = None
            self._report(f"board found: {result.game}")
        if result.status in (MOVING, OCCLUDED):
            self._unset = None  # the players are at the board: it is looked at again
        if result.status != MOVING:
            self._still_occluded = result.reason == STILL_OCCLUDED
        if result.status == OCCLUDED and self.phase not in (Phase.ILLEGAL, Phase.CONFIRM):
            self._show_hand()
            return
        if result.status != SETTLED or result.observation is None:
            if self.offering_clear:
                self._show_hand()  # until the board is read clear, or OK says it is
            elif self.phase in (Phase.PLAY, Phase.CHECK_BOARD):
                self._show_current()
            return
        self._judge(frame, result)

    @property
    def offering_clear(self) -> bool:
        """Whether the screen offers "OK if it is clear": vision found something over the still
        board, the game waits for a move or for an illegal placement to be put right, and no
        menu or page is in the way."""
        waiting = self.phase in (Phase.PLAY, Phase.CHECK_BOARD, Phase.ILLEGAL)
        return self._still_occluded and waiting and not (self.menu.is_open or self._phone_page)

    def _show_hand(self) -> None:
        """The "hand over the board" screen, with "OK if it is clear" when it is offered."""
        self._move_shown_at = -1e9  # the last move is no longer on the screen to be left there
        self._show(screens.hand_over_board(status=self.status, still=self.offering_clear))

    def _judge(self, frame: np.ndarray, result: FrameResult) -> None:
        assert self.referee is not None and result.observation is not None
        game = self.referee.game
        decoded = decode(game, result.observation)
        if self._undone is not None and board_json(game, decoded.observation.cells) != self._undone:
            self._undone = None  # the board changed since the undo: judged as usual
        missed, self._missed = self.phase == Phase.PLAY and self._missed, False
        if missed and self._ask_missed(frame, result, decoded):
            return
        if self.phase == Phase.PLAY and self._undone is not None:
            others = [m for m in decoded.ranked if not self._undoes(m)]
            others += [None] if len(others) == 1 and others[0] is not None else []
            if len(others) > 1:  # the players said it was not that: which was it?
                self._report("read as the move just undone")
                self._ask_which(_Pending(frame, result, others))
                return
        if self.phase == Phase.PLAY and decoded.doubt is not None:
            first = str(decoded.move) if decoded.move is not None else "no move"
            view = game.view()
            changed = sorted(c for c, v in decoded.doubt.cells.items() if view.get(c, v) != v)
            second = f"illegal at {' '.join(changed)}"
            question = ("What was done?", first, second)
            self._ask(_Pending(frame, result, [decoded.move, decoded.doubt], question))
            self._show(screens.doubt(first, changed, status=self.status))
            self._report(f"illegal act in doubt: {first} or {second}?")
            return
        if self.phase == Phase.PLAY and len(decoded.close) > 1:
            self._ask_which(_Pending(frame, result, list(decoded.ranked)))
            return
        outcome = self.referee.judge(decoded.observation)
        offer = decoded.nearest if outcome.verdict.kind == ILLEGAL else None
        self._offer = _Pending(frame, result, [offer]) if offer is not None else None
        self._after(outcome, frame, result)
        if missed and outcome.verdict.kind == NO_CHANGE:
            self._report("looked again: no move seen")
            self._move_shown_at = self._now  # held on the screen like a move
            self._show(screens.no_move_seen(status=self.status))

    def _ask_missed(self, frame: np.ndarray, result: FrameResult, decoded: Decoded) -> bool:
        """The players said a move was missed: ask "Which move?" of the likeliest legal moves
        of the board read again that no change would not leave far behind (less than the
        model's close margin less likely than it: a close call had the players been asked),
        never the move just undone, and "no move" last (an OK pressed by mistake). False when
        there is none, or when the board shows an illegal act (reported or in doubt: it is
        flagged, or asked about, as usual)."""
        assert self.referee is not None
        if decoded.as_seen or decoded.doubt is not None:
            return False
        margin = close_margin(self.referee.game.name)
        moves = [
            m
            for m, cost in zip(decoded.ranked, decoded.costs, strict=True)
            if m is not None and cost < margin and not self._undoes(m)
        ]
        if not moves:
            return False
        self._report("looked again")
        self._ask_which(_Pending(frame, result, [*moves, None]))
        return True

    def _undoes(self, option: Move | Opening | None) -> bool:
        """Whether ``option`` leaves the board of the move the players just undid."""
        assert self.referee is not None
        game = self.referee.game
        return (
            self._undone is not None and board_json(game, board_after(game, option)) == self._undone
        )

    def _ask_which(self, pending: _Pending) -> None:
        """Ask "Which move?" of ``pending``'s first two options ("UNDO: others" when it has
        more)."""
        first, second = (str(m) if m is not None else "no move" for m in pending.options[:2])
        pending.question = ("Which move?", first, second)
        self._ask(pending)
        self._show(screens.confirm(first, second, status=self.status, more=self.more_options))
        self._report(f"close call: {first} or {second}?")

    def _ask(self, pending: _Pending) -> None:
        """Put ``pending``'s question to the players: the CONFIRM phase waits for their
        answer (:meth:`_confirm`)."""
        self._pending = pending
        self.phase = Phase.CONFIRM

    def _after(
        self, outcome: Outcome, frame: np.ndarray | None, result: FrameResult | None
    ) -> None:
        """Journal, calibrate, show and move to the next phase after a verdict."""
        v = outcome.verdict
        self.last_outcome = outcome
        if v.kind in (MOVE, EVENT):
            assert self.journal is not None and self.referee is not None
            self.journal.record(outcome)  # durably, before anyone is shown the move
            if frame is not None and result is not None and result.pose is not None:
                self._calibrate(frame, result)
        opening = v.kind == NO_CHANGE and self.phase == Phase.CHECK_BOARD
        if (v.kind == MOVE or opening) and frame is not None and result is not None:
            self._record(frame, result.t)
        if v.kind == ILLEGAL and self.phase != Phase.CHECK_BOARD:
            self._illegal = v
            self.phase = Phase.ILLEGAL
            if self.alarm is not None:
                self.alarm.illegal()
        elif v.kind in (MOVE, NO_CHANGE, EVENT):
            if self.phase == Phase.ILLEGAL and self.alarm is not None:
                self.alarm.clear()
            self._illegal = None
            self._offer = None
            self._unset = None
            if v.kind == MOVE:
                self._undone = None  # the players picked, or the board was read otherwise
            self.phase = Phase.GAME_OVER if outcome.over else Phase.PLAY
            if v.kind == NO_CHANGE and frame is not None and result is not None and result.pose:
                self._calibrate(frame, result, unchanged=True)
        elif self.phase == Phase.CHECK_BOARD and frame is not None and result is not None:
            # the board is not (yet) as the game expects: say why, and keep looking
            self._unset = (_Pending(frame, result, [None]), v)
        self._report(describe(outcome), outcome)
        if outcome.over and v.kind in (MOVE, EVENT) and self.referee is not None:
            # one record per journaled game: an event after the end (Spectrangle's deduction)
            # updates it, and so does archiving the finished game at the next start
            assert self.journal is not None
            stem = record_stem(self.journal.started, self.referee)
            saved = save_record(self.referee.game, self.records_dir, stem, replace=True)
            self._report(f"game saved: {saved.record}")
        self._show_current(outcome)

    def _calibrate(self, frame: np.ndarray, result: FrameResult, unchanged: bool = False) -> None:
        """Calibrate vision on the accepted board (``unchanged``: a board judged unchanged,
        whose changed cells keep their look: :meth:`vision.readers.Reader.calibrate`), then
        lock the camera's exposure and white balance (a camera without ``lock_exposure`` has
        nothing to lock)."""
        assert self.referee is not None and result.pose is not None
        self.vision.calibrate(frame, result.pose, self.referee.game.view(), unchanged=unchanged)
        lock = getattr(self.camera, "lock_exposure", None)
        if lock is not None and not getattr(self.camera, "locked", True) and lock():
            self._report("camera exposure and white balance locked")

    # ----------------------------------------------------------------- buttons
    def press(self, action: Action) -> None:
        """React to one button press."""
        if self._asking_shutdown:
            self._asking_shutdown = False
            if action is Action.CONFIRM:
                self.shutdown_requested = True
                self._show(screens.shutdown(confirmed=True, status=self.status))
                self._report("shut down confirmed")
            else:
                self._show_current()
            return
        if self._asked is not None:
            self._confirm(action)
            return
        if self._phone_page:  # any button puts the QR code away
            self._phone_page = False
            self._show_current()
            return
        if action is Action.CONFIRM and self.offered is not None and not self.menu.is_open:
            assert self._offer is not None
            offer, self._offer = self._offer, None
            self._report(f"the players say they played {offer.options[0]}")
            self._accept(offer, offer.options[0])
            return
        if action is Action.CONFIRM and self.unset is not None and not self.menu.is_open:
            assert self._unset is not None
            pending, self._unset = self._unset[0], None
            self._report("the players say the board is set up for the game")
            self._accept(pending, None)
            return
        if action is Action.CONFIRM and self.offering_clear:
            self._still_occluded = False
            self.vision.read_next_as_clear()
            self._report("the players say nothing is over the board: reading it as it is")
            self._show_current()
            return
        if action is Action.CONFIRM and self.phase == Phase.PLAY and not self.menu.is_open:
            self._missed = True
            self.vision.look_again()
            self._report("the players say a move was missed: looking again")
            self._show(screens.looking_again(status=self.status))
            return
        choice = self.menu.handle(action)
        if self.menu.is_open:
            self._show(
                screens.menu(
                    self.menu.title, self.menu.choices, self.menu.index, status=self.status
                )
            )
            return
        if choice is not None:
            self._menu_choice(MenuItem(choice))
        elif action is Action.UNDO and self.referee is not None:
            self.event(Event("undo"))
        self._show_current()
        self._observed()

    def event(self, event: Event) -> Outcome | None:
        """Apply a button event (pass, exchange, end, undo, start...) as if pressed."""
        if self.referee is None:
            return None
        if event.name == "start":
            assert self.game_name is not None
            self._new_game(self.game_name, dict(event.data))
            self.phase = Phase.CHECK_BOARD
            self._unset = self._undone = None
            self._missed = False
            self.vision.reset()
            return None
        game = self.referee.game
        before = board_json(game, game.view()) if event.name == "undo" else None
        outcome = self.referee.event(event)
        self._undone = None
        self._missed = False
        if event.name == "undo" and outcome.verdict.kind == EVENT:
            after = board_json(game, game.view())
            self._undone = before if after != before else None  # a move undone, not an event
            self.phase = Phase.PLAY  # the board is judged again against the earlier state
            if self.alarm is not None:
                self.alarm.clear()
            self._illegal = None
            self._offer = None
            self.vision.reset()
        self._after(outcome, None, None)
        self._observed()
        return outcome

    def _menu_choice(self, item: MenuItem) -> None:
        game = self.referee.game if self.referee else None
        if item in (MenuItem.PASS, MenuItem.EXCHANGE, MenuItem.END):
            name = "end" if item is MenuItem.END else item.value
            self.event(Event(name, game.to_move if game and name != "end" else None))
        elif item is MenuItem.NEW_GAME:
            self.event(Event("start", data=dict(game.options) if game else {}))
        elif item is MenuItem.PLAYERS and game is not None:
            players = len(game.players) % 4 + 1 if game.name == "spectrangle" else 2
            self.event(Event("start", data={"players": max(2, players)}))
        elif item is MenuItem.TEAMS and game is not None and game.name == "spectrangle":
            self.event(Event("start", data={"players": 4, "teams": True}))
        elif item is MenuItem.PHONE:
            self._phone_page = True
        elif item is MenuItem.SHUTDOWN:
            self._asking_shutdown = True

    def _confirm(self, action: Action) -> None:
        pending = self._pending
        assert pending is not None and self.referee is not None
        if action is Action.UNDO and self.more_options:
            rest = pending.options[2:] if len(pending.options) > 3 else pending.options[-2:]
            self._report("the players say neither: the next two")
            self._ask_which(replace(pending, options=rest))
            return
        if action is Action.UNDO:
            self._pending = None
            self.phase = Phase.PLAY
            self.vision.reset()
            return
        pick = pending.options[0] if action is Action.CONFIRM else pending.options[1]
        self._pending = None
        self.phase = Phase.PLAY
        self._accept(pending, pick)

    def _accept(self, pending: _Pending, pick: Any) -> None:
        """Judge ``pending``'s board as the players say it is: the accepted state after
        ``pick`` (a move, or None: no change), or ``pick`` itself, an observation of an illegal
        act."""
        assert self.referee is not None
        obs = pick if isinstance(pick, Observation) else pending.result.observation
        assert obs is not None
        chosen = replace(obs, cells=board_after(self.referee.game, pick), probabilities={})
        self._after(self.referee.judge(chosen), pending.frame, pending.result)

    # ----------------------------------------------------------------- screens
    def _show(self, screen: screens.Screen) -> None:
        self.display.show(screen, self._now)

    def _show_current(self, outcome: Outcome | None = None) -> None:
        """The screen of the current phase."""
        referee = self.referee
        if self.menu.is_open:
            return
        if self._phone_page:
            self._show(screens.phone_page(self.web_url))
            return
        if self._asking_shutdown:
            self._show(screens.shutdown(status=self.status))
            return
        if referee is None or self.phase == Phase.FIND_BOARD:
            self._show(screens.board_not_found(status=self.status))
        elif self.unset is not None:
            self._show(screens.check_board(self.unset.reason, self.unset.cells, status=self.status))
        elif self.phase == Phase.ILLEGAL and self._illegal is not None:
            offer = f"OK if it was {self.offered}" if self.offered is not None else None
            self._show(
                screens.illegal(
                    self._illegal.reason, self._illegal.cells, status=self.status, offer=offer
                )
            )
        elif self.phase == Phase.GAME_OVER or referee.game.is_over:
            game = referee.game
            self._show(screens.game_over(game.winner, game.scores, status=self.status))
        elif outcome is not None and outcome.verdict.kind == MOVE:
            self._move_shown_at = self._now
            self._show(
                screens.last_move(
                    outcome.mover,
                    str(outcome.verdict.move),
                    outcome.score_change,
                    status=self.status,
                )
            )
        elif outcome is not None and outcome.verdict.kind == AMBIGUOUS:
            self._show(
                screens.illegal(
                    f"check the board: {outcome.verdict.reason}",
                    outcome.verdict.cells,
                    status=self.status,
                )
            )
        elif self._missed:
            self._show(screens.looking_again(status=self.status))
        elif outcome is None and self._now - self._move_shown_at < self.LAST_MOVE_SECONDS:
            return  # leave the last move on the screen for a moment
        else:
            game = referee.game
            self._show(screens.scoreboard(game.scores, game.to_move, status=self.status))

    def _record(self, frame: np.ndarray, t: float) -> None:
        """Save ``frame`` (captured at ``t``) with the position just accepted, if asked to."""
        if self.recorder is None or self.referee is None:
            return
        game = self.referee.game
        cells = game.observation_to_json(game.current_observation())["cells"]
        self.recorder.save(
            frame,
            {
                "game": game.name,
                "cells": cells,
                "occluded": False,
                "occluded_cells": [],
                "t": round(t, 3),
            },
        )

    def _recorder_warning(self) -> None:
        """Report the frame recorder's one warning (a full disk...), if it has met a problem."""
        if self.recorder is not None and (warning := self.recorder.warning()):
            self._report(f"warning: {warning}")

    def _report(self, text: str, outcome: Outcome | None = None) -> None:
        self.on_report(Report(self._now, self.phase, text, outcome))

    def close(self) -> None:
        """Release the journal and finish saving frames (the camera and display belong to the
        caller)."""
        if self.journal is not None:
            self.journal.close()
        self._lock.release()
        if self.recorder is not None:
            self.recorder.close()
            self._recorder_warning()


def record_stem(started: str, referee: Referee) -> str:
    """The record's file name (without suffix) of the game journaled since ``started``."""
    return f"{started}-{referee.game_name}"
