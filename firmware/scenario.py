"""Scripted games for the simulated game night: what the players do, step by step.

A script is a seeded random legal game of one game, told as the stream the referee would get:
the board after each move (as an observation object of the spec) and the button events (pass,
exchange). Somewhere in the middle a player makes an illegal placement, which the referee must
flag, and then puts the board right and plays a legal move instead.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from engine import ILLEGAL, Event, Game, new_game
from engine.attempts import illegal_attempt


@dataclass(frozen=True)
class Step:
    """One thing the players do: put the board in a state (``board``) or press a button."""

    item: dict[str, Any]
    expect: str
    note: str = ""

    @property
    def is_event(self) -> bool:
        """True for a button press."""
        return "event" in self.item


@dataclass
class Script:
    """A whole scripted game and the options it was started with."""

    game: str
    options: dict[str, Any]
    steps: list[Step] = field(default_factory=list)


def _board(game: Game, view: dict[str, Any]) -> dict[str, Any]:
    return {"game": game.name, "cells": {n: game.cell_to_json(c) for n, c in view.items()}}


class SpectrangleTable:
    """The players' side of a Spectrangle table, which the camera never sees: a shuffled bag and
    a hand of 4 pieces each. Players lay their best-scoring piece, exchange or pass when stuck."""

    def __init__(self, game: Game, rng: random.Random) -> None:
        self.game = game
        self.rng = rng
        self.bag = list(game.box.values)  # type: ignore[attr-defined]
        rng.shuffle(self.bag)
        hand = game.box.hand  # type: ignore[attr-defined]
        self.hands = {p: [self.bag.pop() for _ in range(hand)] for p in game.players}

    def _piece(self, move: Any) -> str:
        return self.game.box.code("".join(move.edges))  # type: ignore[attr-defined]

    def next_action(self) -> Any:
        """The move (or pass/exchange event) the player to move makes."""
        player = self.game.to_move
        hand = self.hands[player]
        moves = [m for m in self.game.legal_moves() if self._piece(m) in hand]
        if moves:
            points = self.game.points  # type: ignore[attr-defined]
            best = max(points(m) for m in moves)
            return self.rng.choice([m for m in moves if points(m) == best])
        return Event("exchange" if self.bag else "pass", player)

    def after(self, action: Any, player: str) -> None:
        """Update the hands: a laid piece is replaced from the bag, an exchange swaps one."""
        hand = self.hands[player]
        if isinstance(action, Event):
            if action.name == "exchange":
                i = self.rng.randrange(len(hand))
                self.bag.append(hand[i])
                hand[i] = self.bag.pop(0)
                self.rng.shuffle(self.bag)
            return
        hand.remove(self._piece(action))
        if self.bag:
            hand.append(self.bag.pop())

    def end_event(self) -> Event:
        """The end-of-game button press listing the pieces still in hand (for the deduction)."""
        return Event("end", data={"remaining": {p: list(h) for p, h in self.hands.items()}})


#: The options a simulated table starts a game with (the game's defaults when absent).
TABLE_OPTIONS: dict[str, dict[str, Any]] = {"spectrangle": {"players": 3}}

#: deals tried (from the seed on) to find a game in which a player must pass or exchange
DEALS_TRIED = 50


def scripted_game(name: str, seed: int = 1, **options: Any) -> Script:
    """A complete seeded game of ``name`` with one illegal placement flagged and corrected; in a
    game with passes and exchanges (Spectrangle), the first deal from ``seed`` on in which some
    player has to pass or exchange, so the game shows them."""
    if name != "spectrangle":
        return _scripted_game(name, seed, **options)
    for deal in range(seed, seed + DEALS_TRIED):
        script = _scripted_game(name, deal, **options)
        if any(step.item.get("event") in ("pass", "exchange") for step in script.steps):
            break
    return script


def _scripted_game(name: str, seed: int, **options: Any) -> Script:
    rng = random.Random(seed)
    game = new_game(name, **options)
    script = Script(name, dict(options))
    table = SpectrangleTable(game, rng) if name == "spectrangle" else None
    illegal_done = False
    turn = 0
    while not game.is_over:
        turn += 1
        if not illegal_done and turn >= 4:
            attempt = illegal_attempt(game, rng)
            if attempt is not None:
                view, reason = attempt
                script.steps.append(Step(_board(game, view), ILLEGAL, reason))
                script.steps.append(Step(_board(game, game.view()), "no-change", "taken back"))
                illegal_done = True
        player = game.to_move
        action = table.next_action() if table else game.random_move(rng)
        if isinstance(action, Event):
            game.handle(action)
            script.steps.append(Step(action.to_json(), "event", action.name))
        else:
            game.play(action)
            script.steps.append(Step(_board(game, game.view()), "move", str(action)))
        if table:
            table.after(action, player)
    if table and any(table.hands.values()):
        end = table.end_event()
        game.handle(end)
        script.steps.append(Step(end.to_json(), "event", "end: pieces in hand are deducted"))
    return script
