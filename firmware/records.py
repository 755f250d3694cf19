"""Finished games read back: a record file (or a journal) -> the game, and its move log.

A record is what :func:`firmware.journal.save_record` writes (``STEM.json``: game, options,
actions); a journal (``current.jsonl``: a header line, then moves and events) is read too, so a
game still being played can be exported or drawn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import Event, FormatError, Game, Move, game_class

from .journal import FORMAT, Journal, JournalError


@dataclass(frozen=True)
class Entry:
    """One action of a game: ``number`` from 1, who made it, its notation (a move) or event
    name, the score change it brought and the scores after it."""

    number: int
    player: str | None
    action: str
    is_move: bool
    score_change: dict[str, int]
    scores: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        """The entry as the web page's move list receives it."""
        return {
            "n": self.number,
            "player": self.player,
            "action": self.action,
            "move": self.is_move,
            "score_change": self.score_change,
            "scores": self.scores,
        }


def load_game(path: str | Path) -> Game:
    """The game of a record (``.json``) or journal (``.jsonl``) file; :class:`FormatError` with a
    one-line reason for anything that is not one. A journal's unreadable lines (one cut short by a
    power cut) are skipped, as when the referee resumes it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise FormatError(f"cannot read {path}: {reason}") from None
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict) and head.get("journal") == FORMAT:
        try:
            resumed = Journal(path).resume()
        except JournalError as exc:
            raise FormatError(str(exc)) from None
        return resumed.referee.game  # lines it cannot replay are skipped, as on resuming
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{path} is neither a game record nor a journal ({exc.msg})") from None
    if not isinstance(record, dict) or not isinstance(record.get("game"), str):
        raise FormatError(f"{path} is not a game record (no 'game')")
    options = record.get("options") or {}
    if not isinstance(options, dict) or not isinstance(record.get("actions", []), list):
        raise FormatError(f"{path}: 'options' must be an object and 'actions' a list")
    try:
        return game_class(record["game"]).from_record(record)
    except (FormatError, TypeError) as exc:
        raise FormatError(f"{path}: {exc}") from None


def fresh(game: Game) -> Game:
    """A new game with the same options, before its first action."""
    return type(game)(**game.options)


def replayed(game: Game, upto: int | None = None) -> Game:
    """``game`` as it stood after its first ``upto`` actions (all when ``None``)."""
    actions = game.history if upto is None else game.history[: max(0, upto)]
    out = fresh(game)
    for action in actions:
        _apply(out, action)
    return out


class MoveLog:
    """The move list with score changes, kept up to date one action at a time (a full replay only
    after an undo)."""

    def __init__(self) -> None:
        self._game: Game | None = None
        self._actions: list[Move | Event] = []
        self.entries: list[Entry] = []

    def update(self, game: Game) -> list[Entry]:
        """The entries of ``game``'s history."""
        history = list(game.history)
        if (
            self._game is None
            or self._game.name != game.name
            or self._game.options != game.options
            or history[: len(self._actions)] != self._actions
        ):
            self._game, self._actions, self.entries = fresh(game), [], []
        for action in history[len(self._actions) :]:
            self._add(action)
        return self.entries

    def _add(self, action: Move | Event) -> None:
        game = self._game
        assert game is not None
        player = action.player if isinstance(action, Event) and action.player else game.to_move
        before = game.scores
        _apply(game, action)
        after = game.scores
        change = {p: after[p] - before.get(p, 0) for p in after if after[p] != before.get(p, 0)}
        name = action.name if isinstance(action, Event) else str(action)
        number = len(self._actions) + 1
        self.entries.append(Entry(number, player, name, isinstance(action, Move), change, after))
        self._actions.append(action)


def log(game: Game) -> list[Entry]:
    """Every action of ``game`` with its player, score change and the scores after it."""
    return list(MoveLog().update(game))


def _apply(game: Game, action: object) -> None:
    if isinstance(action, Event):
        game.handle(action)
    else:
        game.play(action)  # type: ignore[arg-type]
