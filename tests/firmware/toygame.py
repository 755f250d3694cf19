"""A small real game for the firmware tests, registered as ``toy`` while they run.

Two players, ``p1`` and ``p2``, take turns putting their mark on an empty square of a 4x4 board
(``a1``..``d4``) or passing; a mark scores one point per own mark beside it (8 neighbours). The
game ends when the board is full. It is a complete :class:`engine.Game`, so the journal and the
records are tested through the engine's real play/undo/handle/record code, whatever state the
rulebook games are in.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine import DRAW, MOVE, Event, FormatError, Game, Move, Observation, Verdict
from engine.core import Changes
from engine.games import GAMES
from engine.grid import parse_square, square_names

NAME = "toy"
CELLS = square_names(4, 4)
MODULE = f"{__name__}:Toy"


def register() -> None:
    """Make ``toy`` a known game (``new_game("toy")``, ``Referee("toy")``)."""
    GAMES[NAME] = MODULE


@dataclass(frozen=True)
class Mark(Move):
    """Put the mover's mark on ``square``; notation: the square."""

    square: str

    def __str__(self) -> str:
        return self.square

    def cells(self) -> tuple[str, ...]:
        return (self.square,)


@dataclass
class State:
    board: dict[str, str | None]
    turn: int
    scores: dict[str, int]


class Toy(Game):
    """The toy game (see the module docstring)."""

    name = NAME
    description = "test game: marks on a 4x4 board"

    def __init__(self, **options: Any) -> None:
        options.setdefault("players", 2)
        super().__init__(**options)
        if options["players"] != 2:
            raise FormatError("toy is a two-player game")
        turn = 1 if options.get("first") == "p2" else 0
        self.state = State(dict.fromkeys(CELLS), turn, {"p1": 0, "p2": 0})

    @property
    def players(self) -> tuple[str, ...]:
        return ("p1", "p2")

    @property
    def to_move(self) -> str | None:
        return None if self.is_over else self.players[self.state.turn]

    @property
    def scores(self) -> dict[str, int]:
        return dict(self.state.scores)

    @property
    def is_over(self) -> bool:
        return all(self.state.board.values())

    @property
    def winner(self) -> str | None:
        if not self.is_over:
            return None
        a, b = self.state.scores["p1"], self.state.scores["p2"]
        return DRAW if a == b else ("p1" if a > b else "p2")

    @property
    def cell_names(self) -> tuple[str, ...]:
        return CELLS

    def view(self) -> dict[str, Any]:
        return dict(self.state.board)

    def cell_from_json(self, value: Any) -> Any:
        if value is None or value in self.players:
            return value
        raise FormatError(f"not a mark: {value!r}")

    def cell_to_json(self, content: Any) -> Any:
        return content

    def legal_moves(self) -> Iterator[Move]:
        if not self.is_over:
            yield from (Mark(c) for c, mark in self.state.board.items() if mark is None)

    def check(self, move: Move) -> Verdict | None:
        if not isinstance(move, Mark) or move.square not in self.state.board:
            return Verdict.illegal(f"not a square: {move}")
        if self.is_over:
            return Verdict.illegal("the game is over")
        if self.state.board[move.square] is not None:
            return Verdict.illegal(f"{move.square} is taken", move.square)
        return None

    def _apply(self, move: Move) -> None:
        assert isinstance(move, Mark)
        mover = self.players[self.state.turn]
        col, row = parse_square(move.square)
        for name, mark in self.state.board.items():
            c, r = parse_square(name)
            if mark == mover and max(abs(c - col), abs(r - row)) == 1:
                self.state.scores[mover] += 1
        self.state.board[move.square] = mover
        self.state.turn = 1 - self.state.turn

    def parse_move(self, text: str) -> Move:
        if text not in CELLS:
            raise FormatError(f"not a toy move: {text!r}")
        return Mark(text)

    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        if len(changes) != 1:
            return Verdict.ambiguous(f"{len(changes)} squares changed", *sorted(changes))
        ((square, (before, seen)),) = changes.items()
        if before is not None or seen is None:
            return Verdict.illegal("a mark was moved or removed", square)
        if seen != self.to_move:
            return Verdict.illegal(f"it is {self.to_move}'s turn", square)
        return Verdict(MOVE, move=Mark(square))

    def _check_event(self, event: Event) -> Verdict | None:
        return None if event.name == "pass" else super()._check_event(event)

    def _apply_event(self, event: Event) -> None:
        self.state.turn = 1 - self.state.turn


def random_stream(seed: int, length: int) -> Iterator[dict[str, Any]]:
    """What the camera and buttons would send over ``length`` steps of seeded random toy games:
    the board after a random legal move, now and then a pass, an undo, or a new game."""
    rng = random.Random(seed)
    game = Toy()
    for _ in range(length):
        roll = rng.random()
        if game.is_over:
            game = Toy()
            yield {"event": "start", "players": 2}
        elif roll < 0.1:
            game.handle(Event("pass"))
            yield {"event": "pass"}
        elif roll < 0.15 and game.history:
            game.undo()
            yield {"event": "undo"}
        else:
            game.play(rng.choice(list(game.legal_moves())))
            yield game.observation_to_json(game.current_observation())
