"""The referee: one stream of observations and button events in, one verdict out per item.

Shared by ``referee replay`` and the appliance loop: it infers, applies accepted moves and events,
and reports the scores and turn after each item. Pure: it takes parsed JSON objects, not files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .core import (
    AMBIGUOUS,
    EVENT,
    MOVE,
    Event,
    FormatError,
    Game,
    Observation,
    Verdict,
    shown,
)
from .games import new_game

START_OPTIONS = ("players", "teams", "first", "scoring")


@dataclass(frozen=True)
class Outcome:
    """A verdict with the game's situation right after it (what a screen or a log shows)."""

    verdict: Verdict
    scores: dict[str, int]
    to_move: str | None
    over: bool
    winner: str | None
    score_change: dict[str, int] = field(default_factory=dict)
    mover: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The object ``referee replay --json`` prints for one input line."""
        v = self.verdict
        return {
            "verdict": v.kind,
            "move": str(v.move) if v.move is not None else None,
            "reason": v.reason or None,
            "cells": list(v.cells),
            "candidates": [str(m) for m in v.candidates],
            "event": v.event.name if v.event is not None else None,
            "score_change": self.score_change,
            "scores": self.scores,
            "to_move": self.to_move,
            "over": self.over,
            "winner": self.winner,
        }


class Referee:
    """Feeds items to a game, creating a new one on every ``start`` event."""

    def __init__(self, game_name: str, **options: Any) -> None:
        self.game_name = game_name
        self.defaults = {k: v for k, v in options.items() if v is not None}
        self.game: Game = new_game(game_name, **self.defaults)

    def feed(self, item: Any) -> Outcome:
        """Judge one parsed JSON item (observation or event) and apply it when accepted; an
        item :meth:`read` refuses is an ``ambiguous`` outcome (:meth:`unreadable`)."""
        try:
            parsed = self.read(item)
        except FormatError as exc:
            return self.unreadable(str(exc))
        return self.event(parsed) if isinstance(parsed, Event) else self.judge(parsed)

    def read(self, item: Any) -> Observation | Event:
        """One parsed JSON item as an event or an observation of this game;
        :class:`FormatError` saying why it is neither."""
        if not isinstance(item, Mapping):
            raise FormatError("not a JSON object")
        if "event" in item:
            return Event.from_json(item)
        game = item.get("game", self.game_name)
        if game != self.game_name:
            seen = game if isinstance(game, str) else shown(game)
            raise FormatError(f"observation is of {seen}, the game is {self.game_name}")
        return self.game.observation_from_json(item)

    def unreadable(self, reason: str) -> Outcome:
        """The outcome of an item that could not be read (nothing changes)."""
        return self._outcome(Verdict.ambiguous(f"unreadable: {reason}"))

    def judge(self, obs: Observation) -> Outcome:
        """Judge an observation already in canonical form and apply the move it shows, if any.

        While the rules leave the first player open (:attr:`Game.first_is_open`), an opening
        piece of either player is judged as that player's: a legal one makes them the first."""
        game = self.game
        opener = game.opener(obs)
        if opener is not None:  # the first piece decides who starts (and the record says so)
            trial = game.copy()
            trial.open_with(opener)
            verdict = trial.infer(obs)
            if verdict.kind != MOVE:  # the reason for that player; nothing is decided yet
                return self._outcome(verdict, mover=opener)
            game.open_with(opener)
        mover = game.to_move
        verdict = game.infer(obs)
        change: dict[str, int] = {}
        if verdict.kind == MOVE and verdict.move is not None:
            change = self.game.play(verdict.move)
        return self._outcome(verdict, change, mover)

    def event(self, event: Event) -> Outcome:
        """Apply a button event (``start`` begins a new game of the same kind)."""
        return self._event(event)

    def _event(self, event: Event) -> Outcome:
        if event.name == "start":
            options = dict(self.defaults)
            options.update({k: event.data[k] for k in START_OPTIONS if k in event.data})
            if event.player is not None and "first" not in event.data:
                options["first"] = event.player
            try:
                game = new_game(self.game_name, **options)
            except FormatError as exc:
                return self._outcome(Verdict.illegal(f"cannot start: {exc}"))
            self.game = game
            return self._outcome(Verdict(EVENT, event=event))
        before, mover = self.game.scores, self.game.to_move
        verdict = self.game.handle(event)
        after = self.game.scores
        change = {p: after[p] - before.get(p, 0) for p in after if after[p] != before.get(p, 0)}
        return self._outcome(verdict, change if verdict.kind == EVENT else {}, mover)

    def _outcome(
        self, verdict: Verdict, change: dict[str, int] | None = None, mover: str | None = None
    ) -> Outcome:
        g = self.game
        return Outcome(verdict, g.scores, g.to_move, g.is_over, g.winner, change or {}, mover)


def describe(outcome: Outcome) -> str:
    """One human-readable line for an outcome (the plain ``referee replay`` output)."""
    v = outcome.verdict
    if v.kind == MOVE:
        head = f"move {v.move}"
    elif v.kind == EVENT and v.event is not None:
        head = f"event {v.event.name}"
    elif v.kind == AMBIGUOUS:
        head = f"AMBIGUOUS: {v.reason}"
    elif v.kind == "illegal":
        head = f"ILLEGAL: {v.reason}"
    else:
        head = "no change" + (f" ({v.reason})" if v.reason else "")
    gained = "".join(f" {p}{d:+d}" for p, d in outcome.score_change.items())
    scores = " ".join(f"{p}={s}" for p, s in outcome.scores.items())
    tail = f"game over, winner: {outcome.winner}" if outcome.over else f"to move: {outcome.to_move}"
    return f"{head}{gained} | {scores} | {tail}"
