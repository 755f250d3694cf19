"""The vocabulary every game speaks: observations, events, moves, verdicts and the Game base.

Data flows one way: an :class:`Observation` (what the camera saw) or an :class:`Event` (a button)
goes into :meth:`Game.infer` / :meth:`Game.handle`, which answer with a :class:`Verdict`. A game's
state only changes through :meth:`Game.play` (a legal move), :meth:`Game.handle` (an accepted
event) and :meth:`Game.undo`.

Games are mutable, like ``chess.Board``: ``play`` pushes onto a history stack and ``undo`` pops
it. Moves are small frozen value objects whose ``str()`` is their notation; each game's
``parse_move`` reads that notation back.
"""

from __future__ import annotations

import copy
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

#: Verdict kinds, as printed by ``referee replay --json`` under the key ``verdict``.
MOVE = "move"
ILLEGAL = "illegal"
NO_CHANGE = "no-change"
AMBIGUOUS = "ambiguous"
EVENT = "event"

#: Button events of ``shared/spec/observation.md``.
EVENT_NAMES = ("start", "pass", "exchange", "undo", "end", "resign")

#: ``Game.winner`` when the game ended level.
DRAW = "draw"

Content = Hashable
"""A cell's content in the game's own canonical form (``None`` is an empty cell)."""


def shown(value: Any) -> str:
    """A value from the input as the players wrote it, in JSON (``null``, ``true``, ``"a1"``),
    for messages: never a Python repr."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a circular structure: cannot come from JSON
        return str(value)


class RefereeError(ValueError):
    """Base class of the engine's errors: bad input, never a bug."""


class IllegalMoveError(RefereeError):
    """``Game.play`` was given a move that is not legal; ``reason`` says why."""

    def __init__(self, reason: str, cells: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cells = cells


class FormatError(RefereeError):
    """An observation, event, move notation or record that cannot be read."""


@dataclass(frozen=True)
class Observation:
    """What the camera saw: every visible cell's content, in the game's canonical form.

    ``cells`` maps cell name -> content (``None`` = empty). A cell missing from ``cells`` is
    *unknown* (hidden), never empty. ``probabilities`` optionally maps cell name -> {content:
    probability} for the vision decoder; the engine's own inference uses ``cells``.
    """

    game: str
    cells: Mapping[str, Content]
    partial: bool = False
    occluded: bool = False
    confidence: Mapping[str, float] = field(default_factory=dict)
    probabilities: Mapping[str, Mapping[Content, float]] = field(default_factory=dict)
    t: float | None = None


@dataclass(frozen=True)
class Event:
    """A button event: ``name`` is one of :data:`EVENT_NAMES`; ``data`` holds the rest."""

    name: str
    player: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The event as in ``shared/spec/observation.md``."""
        out: dict[str, Any] = {"event": self.name}
        if self.player is not None:
            out["player"] = self.player
        out.update(self.data)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Event:
        """Read ``{"event": NAME, ...}``; raises :class:`FormatError` on an unknown name."""
        name = obj.get("event")
        if name not in EVENT_NAMES:
            raise FormatError(
                f"unknown event {shown(name)}; expected one of {', '.join(EVENT_NAMES)}"
            )
        player = obj.get("player")
        if player is not None and not isinstance(player, str):
            raise FormatError(f"event player must be a name, got {shown(player)}")
        data = {k: v for k, v in obj.items() if k not in ("event", "player")}
        return cls(name, player, data)


class Move:
    """Base of every game's move value objects (frozen dataclasses); ``str(move)`` is notation."""

    def cells(self) -> tuple[str, ...]:
        """The cells this move touches (for screens and reasons)."""
        return ()


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to one observation or event.

    ``kind`` is one of ``move`` (``move`` set, already legal), ``illegal`` (``reason`` and the
    offending ``cells``), ``no-change``, ``ambiguous`` (``reason``; ``candidates`` when several
    moves fit) or ``event`` (an accepted button event).
    """

    kind: str
    move: Move | None = None
    reason: str = ""
    cells: tuple[str, ...] = ()
    candidates: tuple[Move, ...] = ()
    event: Event | None = None

    @classmethod
    def illegal(cls, reason: str, *cells: str, move: Move | None = None) -> Verdict:
        """An illegal placement: ``reason`` is for the players, ``cells`` are where to look."""
        return cls(ILLEGAL, move=move, reason=reason, cells=tuple(cells))

    @classmethod
    def ambiguous(cls, reason: str, *cells: str, candidates: tuple[Move, ...] = ()) -> Verdict:
        """The observation is unreadable or fits no single move (or several)."""
        return cls(AMBIGUOUS, reason=reason, cells=tuple(cells), candidates=candidates)


Changes = dict[str, tuple[Content, Content]]
"""Cell name -> (content the engine expects, content observed), for the cells that differ."""


class Game(ABC):
    """The state of one game, with its rules.

    Subclasses define ``name``, ``players``, the cell codec (:meth:`cell_from_json`,
    :meth:`cell_to_json`), :meth:`view`, :meth:`legal_moves`, :meth:`check`, :meth:`_apply`,
    :meth:`explain` and :meth:`parse_move`. All mutable state lives in ``self.state`` (anything
    ``copy.deepcopy`` can copy), so ``play``/``handle``/``undo`` can snapshot it generically.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: True when the rulebook names no first player and every piece shows whose it is: with no
    #: ``first`` option, the first piece placed decides who starts (:meth:`opener`).
    opening_decides_first: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        self.options: dict[str, Any] = dict(options)
        self.state: Any = None
        self._history: list[tuple[Move | Event, Any]] = []

    # ----------------------------------------------------------------- who and how much
    @property
    @abstractmethod
    def players(self) -> tuple[str, ...]:
        """Player names in turn order."""

    @property
    @abstractmethod
    def to_move(self) -> str | None:
        """The player whose turn it is (``None`` once the game is over)."""

    @property
    @abstractmethod
    def scores(self) -> dict[str, int]:
        """Player name -> score, as printed under ``scores``."""

    @property
    @abstractmethod
    def is_over(self) -> bool:
        """True once the game has ended."""

    @property
    @abstractmethod
    def winner(self) -> str | None:
        """The winning player (or team), :data:`DRAW`, or ``None`` while the game goes on."""

    # ----------------------------------------------------------------- board
    @property
    @abstractmethod
    def cell_names(self) -> tuple[str, ...]:
        """Every cell of the board, by name, in a fixed order."""

    @abstractmethod
    def view(self) -> dict[str, Content]:
        """What the camera should see now: cell name -> canonical content (``None`` empty)."""

    @abstractmethod
    def cell_from_json(self, value: Any) -> Content:
        """Observation JSON of one cell -> canonical content; :class:`FormatError` if invalid."""

    @abstractmethod
    def cell_to_json(self, content: Content) -> Any:
        """Canonical content -> observation JSON of one cell."""

    # ----------------------------------------------------------------- moves
    @abstractmethod
    def legal_moves(self) -> Iterator[Move]:
        """Every legal move of the player to move."""

    @abstractmethod
    def check(self, move: Move) -> Verdict | None:
        """``None`` when ``move`` is legal now, else an illegal :class:`Verdict` saying why."""

    @abstractmethod
    def _apply(self, move: Move) -> None:
        """Change ``self.state`` by a legal move (scores, turn, game end included)."""

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """Read a move's notation; :class:`FormatError` if it is not one."""

    def owner(self, content: Content) -> str | None:
        """The player a cell's content belongs to, when the piece shows it (``None`` if not)."""
        return None

    def can_cover(self, under: Content, over: Content) -> bool:
        """Whether a piece ``over`` can be put down over ``under`` so that only it shows, legal
        or not (Gobblet: a larger piece over a smaller one); pieces do not stack by default."""
        return False

    @property
    def first_is_open(self) -> bool:
        """True while the first player is still to be decided by the first piece placed: the
        rules leave it open, no ``first`` option was given and nothing was played yet."""
        return (
            self.opening_decides_first and self.options.get("first") is None and not self._history
        )

    def opener(self, obs: Observation) -> str | None:
        """While :attr:`first_is_open`: the player whose pieces ``obs`` shows newly placed, when
        they are all one player's; else ``None``."""
        if not self.first_is_open or obs.game != self.name:
            return None
        view = self.view()
        owners = {
            self.owner(seen)
            for name, seen in obs.cells.items()
            if name in view and seen != view[name] and seen is not None
        }
        if len(owners) != 1:
            return None
        (player,) = owners
        return player if player in self.players else None

    def open_with(self, player: str) -> None:
        """Let ``player`` start: the game begins again with ``first=player``. Only while
        :attr:`first_is_open`, else :class:`RefereeError`."""
        if not self.first_is_open or player not in self.players:
            raise RefereeError(f"{player} cannot open this game: the first player is decided")
        type(self).__init__(self, **{**self.options, "first": player})
        #: the first player was decided by the first piece (undoing it opens the choice again)
        self._opened_by_piece = True

    def random_move(self, rng: random.Random) -> Move | Event:
        """A uniformly random legal move (or the pass/exchange event a stuck player must make);
        used by random playouts, benchmarks and tests. Games override it with faster ones."""
        moves = list(self.legal_moves())
        if not moves:
            raise RefereeError(f"{self.to_move} has no legal move")
        return rng.choice(moves)

    def is_legal(self, move: Move) -> bool:
        """True when ``move`` may be played now."""
        return self.check(move) is None

    def play(self, move: Move) -> dict[str, int]:
        """Apply a legal move; returns the score change. Raises :class:`IllegalMoveError`."""
        problem = self.check(move)
        if problem is not None:
            raise IllegalMoveError(problem.reason, problem.cells)
        before = self.scores
        self._history.append((move, copy.deepcopy(self.state)))
        self._apply(move)
        after = self.scores
        return {p: after[p] - before.get(p, 0) for p in after if after[p] != before.get(p, 0)}

    def undo(self) -> Move | Event:
        """Take back the last move or accepted event; raises :class:`RefereeError` if none."""
        if not self._history:
            raise RefereeError("nothing to undo")
        action, state = self._history.pop()
        self.state = state
        if not self._history and getattr(self, "_opened_by_piece", False):
            # the piece that decided who starts is taken back: either player may start again
            options = {k: v for k, v in self.options.items() if k != "first"}
            type(self).__init__(self, **options)
            self._opened_by_piece = False
        return action

    @property
    def history(self) -> tuple[Move | Event, ...]:
        """Moves and accepted events since the start, oldest first."""
        return tuple(action for action, _ in self._history)

    def views(self) -> list[dict[str, Content]]:
        """What the camera saw before each action of :attr:`history`, and what it sees now:
        ``len(history) + 1`` views, oldest first."""
        now = self.state
        seen = []
        try:
            for _, state in self._history:
                self.state = state
                seen.append(self.view())
        finally:
            self.state = now
        return [*seen, self.view()]

    def changes_after(self, move: Move) -> dict[str, Content]:
        """Cell name -> new content for the cells ``move`` would change (the state is kept).

        The vision decoder scores every legal move by these cells; games may override this
        with something faster than play/view/undo."""
        before = self.view()
        self.play(move)
        after = self.view()
        self.undo()
        return {name: c for name, c in after.items() if c != before[name]}

    def copy(self) -> Game:
        """An independent copy (history included)."""
        return copy.deepcopy(self)

    # ----------------------------------------------------------------- events
    def handle(self, event: Event) -> Verdict:
        """Apply a button event (``pass``, ``exchange``, ``end``, ``resign``; ``undo`` is
        handled here too). Returns an ``event`` verdict, or ``illegal`` with the reason.
        ``start`` is not a game event: it creates a new game (see :mod:`engine.referee`)."""
        if event.name == "undo":
            if not self._history:
                return Verdict.illegal("nothing to undo")
            self.undo()
            return Verdict(EVENT, event=event)
        if self.is_over and event.name != "end":
            return Verdict.illegal("the game is over")
        if event.player is not None and event.name in ("pass", "exchange"):
            if event.player not in self.players:
                return Verdict.illegal(f"unknown player {shown(event.player)}")
            if event.player != self.to_move:
                return Verdict.illegal(f"it is {self.to_move}'s turn, not {event.player}'s")
        problem = self._check_event(event)
        if problem is not None:
            return problem
        self._history.append((event, copy.deepcopy(self.state)))
        self._apply_event(event)
        return Verdict(EVENT, event=event)

    def _check_event(self, event: Event) -> Verdict | None:
        """``None`` when ``event`` is acceptable now; games override to allow their events."""
        return Verdict.illegal(f"{self.name} has no {shown(event.name)} event")

    def _apply_event(self, event: Event) -> None:
        """Change ``self.state`` by an accepted event."""
        raise NotImplementedError(event.name)

    # ----------------------------------------------------------------- inference
    def observation_from_json(self, obj: Mapping[str, Any]) -> Observation:
        """Read an observation object; raises :class:`FormatError` with a readable reason."""
        cells_json = obj.get("cells")
        if not isinstance(cells_json, Mapping):
            raise FormatError("observation has no 'cells' object")
        known = set(self.cell_names)
        cells: dict[str, Content] = {}
        for name, value in cells_json.items():
            if name not in known:
                raise FormatError(f"unknown cell {shown(name)} for {self.name}")
            try:
                cells[name] = self.cell_from_json(value)
            except FormatError as exc:
                raise FormatError(f"{name}: {exc}") from None
        partial = obj.get("partial", False)
        if not isinstance(partial, bool):
            raise FormatError(f"'partial' must be true or false, got {shown(partial)}")
        missing = [name for name in self.cell_names if name not in cells]
        if missing and not partial:
            raise FormatError(
                f"{len(missing)} cells missing ({', '.join(missing[:3])}"
                f'{", ..." if len(missing) > 3 else ""}) without "partial": true'
            )
        confidence = obj.get("confidence") or {}
        if not isinstance(confidence, Mapping):
            raise FormatError("'confidence' must map cell names to numbers")
        t = obj.get("t")
        return Observation(
            game=str(obj.get("game", self.name)),
            cells=cells,
            partial=partial,
            occluded=bool(obj.get("occluded", False)),
            confidence=dict(confidence),
            t=float(t) if isinstance(t, int | float) else None,
        )

    def observation_to_json(self, obs: Observation) -> dict[str, Any]:
        """An observation as the JSON of ``shared/spec/observation.md``."""
        out: dict[str, Any] = {
            "game": obs.game,
            "cells": {name: self.cell_to_json(c) for name, c in obs.cells.items()},
        }
        if obs.partial or len(obs.cells) < len(self.cell_names):
            out["partial"] = True
        if obs.occluded:
            out["occluded"] = True
        if obs.confidence:
            out["confidence"] = {k: round(float(v), 4) for k, v in obs.confidence.items()}
        if obs.t is not None:
            out["t"] = obs.t
        return out

    def current_observation(self) -> Observation:
        """The full observation the camera should report for the current state."""
        return Observation(self.name, self.view())

    def infer(self, obs: Observation) -> Verdict:
        """Which single move explains ``obs``, judged against the accepted state.

        Never changes the state. Cells missing from ``obs`` are unknown: an observation with
        hidden cells and visible changes is ``ambiguous`` (the move cannot be judged while part
        of the board is hidden).
        """
        if obs.game != self.name:
            return Verdict.ambiguous(f"observation is of {obs.game}, the game is {self.name}")
        expected = self.view()
        changes: Changes = {
            name: (expected[name], seen)
            for name, seen in obs.cells.items()
            if name in expected and seen != expected[name]
        }
        hidden = [name for name in self.cell_names if name not in obs.cells]
        if not changes:
            return Verdict(NO_CHANGE, reason=f"{len(hidden)} cells hidden" if hidden else "")
        if self.is_over:
            return Verdict.illegal("the game is over: no more moves", *sorted(changes))
        verdict = self.explain(changes, obs)
        if hidden and verdict.kind in (MOVE, ILLEGAL):
            guess = f"; it looks like {verdict.move}" if verdict.move is not None else ""
            return Verdict.ambiguous(
                f"board partly hidden ({len(hidden)} cells), cannot judge yet{guess}",
                *sorted(changes),
                candidates=(verdict.move,) if verdict.move is not None else (),
            )
        return verdict

    @abstractmethod
    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        """The verdict for a non-empty set of changed cells (the game-specific heart)."""

    # ----------------------------------------------------------------- records
    def to_record(self) -> dict[str, Any]:
        """A JSON-able game record: the game, its options and every action in order."""
        actions: list[Any] = []
        for action, _ in self._history:
            actions.append(action.to_json() if isinstance(action, Event) else str(action))
        return {"game": self.name, "options": dict(self.options), "actions": actions}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Game:
        """Rebuild a game by replaying a record made by :meth:`to_record`."""
        if record.get("game") != cls.name:
            raise FormatError(f"record is of {shown(record.get('game'))}, not {cls.name}")
        game = cls(**dict(record.get("options") or {}))
        for i, action in enumerate(record.get("actions") or []):
            try:
                if isinstance(action, Mapping):
                    verdict = game.handle(Event.from_json(action))
                    if verdict.kind != EVENT:
                        raise FormatError(verdict.reason)
                else:
                    game.play(game.parse_move(str(action)))
            except RefereeError as exc:
                raise FormatError(f"record action {i + 1} ({shown(action)}): {exc}") from None
        return game
