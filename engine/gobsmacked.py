"""Gobsmacked!: avoid lining up 3 tokens of one colour or one shape, or your OPPONENT scores.

Rulebook: ``shared/rules/gobsmacked.fr.txt``; the board and the token set are assumptions kept in
``engine/data/gobsmacked.json`` (see :func:`load_box`). In short:

- Opening: each player puts one token in one of the two central holes (no other rule).
- A turn: draw a token at random and put it in a hole touching 2 or more tokens already on the
  board, horizontally, vertically or diagonally (fig. 2).
- Scoring, after every turn: every straight run of 3 holes through the new token whose tokens share
  a colour gives the opponent 1 point, sharing a shape 1 point, both 2; a run of 4 holds two runs
  of 3 (fig. 4). The shape joker counts as circle and square but no colour, the colour joker as
  black and white but no shape, each independently in every run (fig. 3).
- The game ends when every hole is full; the highest score wins, equal scores are a draw.

Notation: a token code and a hole, ``WS@c3``; both opening tokens seen at once, ``BC@d2+WS@e2``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import product
from typing import Any

from . import data
from .core import (
    DRAW,
    MOVE,
    Changes,
    Content,
    Event,
    FormatError,
    Game,
    Move,
    Observation,
    RefereeError,
    Verdict,
    shown,
)

PLAYERS = ("p1", "p2")

#: A hole's 8 neighbours, and the 4 directions of a straight line, as (col, row) steps.
AROUND = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
LINES = ((1, 0), (0, 1), (1, 1), (1, -1))


# --------------------------------------------------------------------------- the box


@dataclass(frozen=True)
class TokenKind:
    """One kind of token: its observation name, notation code and what it counts as."""

    name: str
    code: str
    colours: frozenset[str]
    shapes: frozenset[str]
    count: int


def run_points(a: TokenKind, b: TokenKind, c: TokenKind) -> int:
    """Points one straight run of 3 tokens gives: 1 for a shared colour, 1 for a shared shape."""
    return bool(a.colours & b.colours & c.colours) + bool(a.shapes & b.shapes & c.shapes)


@dataclass(frozen=True)
class Box:
    """The board (holes on a square grid) and the token set of one data file.

    ``neighbours[i]`` are the holes around hole ``i``; ``runs[i]`` holds, for every straight run
    of 3 consecutive holes through hole ``i``, the other two holes. Both come from the grid
    positions of the data file, never from the hole names.
    """

    holes: tuple[str, ...]
    index: Mapping[str, int]
    neighbours: tuple[tuple[int, ...], ...]
    runs: tuple[tuple[tuple[int, int], ...], ...]
    opening: tuple[str, ...]
    kinds: tuple[TokenKind, ...]
    by_name: Mapping[str, TokenKind]
    by_code: Mapping[str, TokenKind]

    def __deepcopy__(self, memo: dict[int, Any]) -> Box:
        return self  # immutable and shared by every game of the same data file


def _runs_through(
    col: int, row: int, at: Mapping[tuple[int, int], int]
) -> Iterator[tuple[int, int]]:
    for dc, dr in LINES:
        for start in (-2, -1, 0):
            run = [(col + (start + k) * dc, row + (start + k) * dr) for k in range(3)]
            if all(p in at for p in run):
                a, b = (at[p] for p in run if p != (col, row))
                yield a, b


def _token_kind(name: str, raw: Mapping[str, Any]) -> TokenKind:
    return TokenKind(
        name,
        str(raw["code"]),
        frozenset(raw["colours"]),
        frozenset(raw["shapes"]),
        int(raw["count"]),
    )


def _box_from_json(raw: Mapping[str, Any]) -> Box:
    positions = {str(name): (int(c), int(r)) for name, (c, r) in raw["holes"].items()}
    at = {pos: i for i, pos in enumerate(positions.values())}
    if len(at) != len(positions):
        raise FormatError("two holes share one grid position")
    opening = tuple(str(h) for h in raw["opening"])
    if len(set(opening)) != len(PLAYERS) or not set(opening) <= set(positions):
        raise FormatError(f"'opening' must name {len(PLAYERS)} different holes, got {opening}")
    kinds = tuple(_token_kind(str(name), t) for name, t in raw["tokens"].items())
    codes = [k.code for k in kinds]
    if len(set(codes)) != len(codes) or any(not c or "@" in c or "+" in c for c in codes):
        raise FormatError(f"token codes must be distinct, non-empty, without @ or +: {codes}")
    if any(k.count < 0 for k in kinds) or sum(k.count for k in kinds) < len(positions):
        raise FormatError("token counts must be >= 0 and fill every hole")
    return Box(
        holes=tuple(positions),
        index={name: i for i, name in enumerate(positions)},
        neighbours=tuple(
            tuple(at[(c + dc, r + dr)] for dc, dr in AROUND if (c + dc, r + dr) in at)
            for c, r in positions.values()
        ),
        runs=tuple(tuple(_runs_through(c, r, at)) for c, r in positions.values()),
        opening=opening,
        kinds=kinds,
        by_name={k.name: k for k in kinds},
        by_code={k.code: k for k in kinds},
    )


@cache
def load_box(path: str | None = None) -> Box:
    """The box of ``engine/data/gobsmacked.json``, or of the data file at ``path``."""
    where = path or "engine/data/gobsmacked.json"
    try:
        raw = data.load("gobsmacked", path)
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read {where}: {exc}") from None
    try:
        return _box_from_json(raw)
    except FormatError as exc:
        raise FormatError(f"{where}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FormatError(f"{where}: malformed ({type(exc).__name__}: {exc})") from None


# --------------------------------------------------------------------------- moves


@dataclass(frozen=True)
class Place(Move):
    """One token into one hole: ``token`` is its code. Notation ``WS@c3``."""

    token: str
    hole: str

    def __str__(self) -> str:
        return f"{self.token}@{self.hole}"

    def cells(self) -> tuple[str, ...]:
        """The hole filled."""
        return (self.hole,)


@dataclass(frozen=True)
class Opening(Move):
    """Both opening tokens seen at once. Notation ``BC@d2+WS@e2``, placements by hole name."""

    placements: tuple[Place, ...]

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.placements, key=lambda p: (p.hole, p.token)))
        object.__setattr__(self, "placements", ordered)

    def __str__(self) -> str:
        return "+".join(str(p) for p in self.placements)

    def cells(self) -> tuple[str, ...]:
        """The holes filled."""
        return tuple(p.hole for p in self.placements)


# --------------------------------------------------------------------------- the game


@dataclass
class GobsmackedState:
    """Everything that changes during a game (``play`` deep-copies it for undo)."""

    board: list[str | None]  # token name per hole, in the order of Box.holes
    scores: list[int]  # per player, in PLAYERS order
    turn: int  # index of the player to move
    resigned: int | None = None  # index of the player who resigned
    ended: bool = False  # the players pressed "end"

    def __deepcopy__(self, memo: dict[int, Any]) -> GobsmackedState:
        # play() copies the state every move: this is ~8x faster than the generic deepcopy
        return GobsmackedState(
            list(self.board), list(self.scores), self.turn, self.resigned, self.ended
        )


def _touching(n: int) -> str:
    return "no token" if n == 0 else f"only {n} token{'s' if n > 1 else ''}"


class Gobsmacked(Game):
    """A game of Gobsmacked! for ``p1`` and ``p2``.

    Options: ``first`` (who plays the first turn after the opening, default ``p1``; the opening
    tokens go in ``p1`` then ``p2``), ``players`` (2 or ``["p1", "p2"]``), ``data`` (another data
    file). ``None`` values are ignored.
    """

    name = "gobsmacked"
    description = "Gobsmacked!: line up three alike and your opponent scores"

    #: "Le jeton doit être adjacent à 2 ou plusieurs jetons déjà dans la planche".
    NEEDED = 2

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        given = {k: v for k, v in options.items() if v is not None}
        unknown = sorted(set(given) - {"players", "teams", "first", "scoring", "data"})
        if unknown:
            raise FormatError(f"unknown gobsmacked option(s): {', '.join(unknown)}")
        if "teams" in given or "scoring" in given:
            raise FormatError("gobsmacked has no teams and no scoring variants")
        if given.get("players", 2) not in (2, list(PLAYERS), PLAYERS):
            raise FormatError(
                f"gobsmacked is for 2 players (p1, p2), got {shown(given['players'])}"
            )
        first = given.get("first", PLAYERS[0])
        if first not in PLAYERS:
            raise FormatError(f"first player must be p1 or p2, got {shown(first)}")
        self.box = load_box(given.get("data"))
        self._first = PLAYERS.index(first)
        self.state = GobsmackedState([None] * len(self.box.holes), [0] * len(PLAYERS), 0)

    # ----------------------------------------------------------------- who and how much
    @property
    def players(self) -> tuple[str, ...]:
        """``("p1", "p2")``."""
        return PLAYERS

    @property
    def to_move(self) -> str | None:
        """The player to move (``p1`` then ``p2`` for the opening), ``None`` once over."""
        return None if self.is_over else PLAYERS[self.state.turn]

    @property
    def scores(self) -> dict[str, int]:
        """Points each player received from the opponent's runs."""
        return dict(zip(PLAYERS, self.state.scores, strict=True))

    @property
    def is_over(self) -> bool:
        """Every hole full, or ended by ``end`` or ``resign``."""
        s = self.state
        return s.resigned is not None or s.ended or None not in s.board

    @property
    def winner(self) -> str | None:
        """The opponent of a resigning player, else the higher score; equal scores: DRAW."""
        s = self.state
        if s.resigned is not None:
            return PLAYERS[1 - s.resigned]
        if not self.is_over:
            return None
        a, b = s.scores
        return DRAW if a == b else PLAYERS[0 if a > b else 1]

    # ----------------------------------------------------------------- board
    @property
    def cell_names(self) -> tuple[str, ...]:
        """The holes, in data-file order."""
        return self.box.holes

    def view(self) -> dict[str, Content]:
        """Hole -> token name (``"black-circle"``, ...) or ``None``."""
        return dict(zip(self.box.holes, self.state.board, strict=True))

    def cell_from_json(self, value: Any) -> Content:
        """``null`` or one of the token names of the spec; anything else is a FormatError."""
        if value is None or (isinstance(value, str) and value in self.box.by_name):
            return value
        raise FormatError(
            f"not a gobsmacked token: {shown(value)}; expected null or one of "
            + ", ".join(self.box.by_name)
        )

    def cell_to_json(self, content: Content) -> Any:
        """Token names are their own JSON."""
        return content

    # ----------------------------------------------------------------- rules
    def _in_opening(self) -> bool:
        board, index = self.state.board, self.box.index
        return any(board[index[h]] is None for h in self.box.opening)

    def _remaining(self) -> dict[str, int]:
        """Token name -> how many are still face down in the supply."""
        board = self.state.board
        return {k.name: k.count - board.count(k.name) for k in self.box.kinds}

    def _touches(self, i: int) -> int:
        board = self.state.board
        return sum(board[j] is not None for j in self.box.neighbours[i])

    def _needed(self) -> int:
        """How many tokens a new one must touch: 2, or fewer when no empty hole touches 2.

        Assumption (the rulebook is silent): on a layout where no empty hole touches 2 tokens,
        the requirement drops to the most any empty hole touches, so the board still fills up.
        """
        board = self.state.board
        most = max((self._touches(i) for i, c in enumerate(board) if c is None), default=0)
        return min(self.NEEDED, most)

    def _legal_holes(self) -> list[int]:
        board = self.state.board
        if self._in_opening():
            return [i for i in map(self.box.index.get, self.box.opening) if board[i] is None]
        needed = self._needed()
        return [i for i, c in enumerate(board) if c is None and self._touches(i) >= needed]

    def _points(self, i: int) -> int:
        """Points of every straight run of 3 through the (just placed) token at hole ``i``."""
        board, kinds = self.state.board, self.box.by_name
        new = kinds[board[i]]
        return sum(
            run_points(new, kinds[board[j]], kinds[board[k]])
            for j, k in self.box.runs[i]
            if board[j] is not None and board[k] is not None
        )

    # ----------------------------------------------------------------- moves
    def legal_moves(self) -> Iterator[Move]:
        """Every token still in supply into every legal hole; on an empty board also every
        combined opening."""
        if self.is_over:
            return
        remaining = self._remaining()
        codes = [k.code for k in self.box.kinds if remaining[k.name] > 0]
        for i in self._legal_holes():
            for code in codes:
                yield Place(code, self.box.holes[i])
        if not any(self.state.board):
            a, b = self.box.opening
            for x, y in product(codes, repeat=2):
                if x != y or remaining[self.box.by_code[x].name] >= 2:
                    yield Opening((Place(x, a), Place(y, b)))

    def random_move(self, rng: random.Random) -> Move:
        """A token drawn at random from the supply into a random legal hole (half of the games
        open with both opening tokens at once)."""
        if self.is_over:
            raise RefereeError("the game is over")
        remaining = self._remaining()
        bag = [k.code for k in self.box.kinds for _ in range(remaining[k.name])]
        if not any(self.state.board) and rng.random() < 0.5:
            x, y = rng.sample(bag, 2)
            a, b = self.box.opening
            return Opening((Place(x, a), Place(y, b)))
        return Place(rng.choice(bag), self.box.holes[rng.choice(self._legal_holes())])

    def _token_problem(self, place: Place, remaining: Mapping[str, int]) -> str | None:
        """Why ``place`` cannot happen whatever the rules of the moment, or None."""
        kind = self.box.by_code.get(place.token)
        if kind is None:
            return f"unknown token code {shown(place.token)}"
        i = self.box.index.get(place.hole)
        if i is None:
            return f"there is no hole {shown(place.hole)}"
        if self.state.board[i] is not None:
            return f"{place.hole} already holds a {self.state.board[i]}"
        if remaining[kind.name] <= 0:
            return f"no {kind.name} left: all {kind.count} are on the board"
        return None

    def check(self, move: Move) -> Verdict | None:
        """None when ``move`` is legal now, else the illegal verdict with the reason."""
        if self.is_over:
            return Verdict.illegal("the game is over", *move.cells(), move=move)
        if isinstance(move, Place):
            return self._check_place(move)
        if isinstance(move, Opening):
            return self._check_opening(move)
        return Verdict.illegal(f"not a gobsmacked move: {move}", move=move)

    def _check_place(self, move: Place) -> Verdict | None:
        reason = self._token_problem(move, self._remaining())
        if reason is not None:
            return Verdict.illegal(reason, move.hole, move=move)
        if self._in_opening():
            if move.hole in self.box.opening:
                return None
            return Verdict.illegal(
                f"{move.hole}: the opening tokens go in the central holes "
                + " and ".join(self.box.opening),
                move.hole,
                move=move,
            )
        touches, needed = self._touches(self.box.index[move.hole]), self._needed()
        if touches < needed:
            return Verdict.illegal(
                f"token at {move.hole} touches {_touching(touches)}, needs {needed}",
                move.hole,
                move=move,
            )
        return None

    def _check_opening(self, move: Opening) -> Verdict | None:
        if any(self.state.board):
            return Verdict.illegal(
                "both opening tokens at once only on an empty board", *move.cells(), move=move
            )
        wrong = [h for h in move.cells() if h not in self.box.opening]
        if wrong or len(set(move.cells())) != len(self.box.opening):
            return Verdict.illegal(
                "the opening tokens go in the central holes " + " and ".join(self.box.opening),
                *(wrong or move.cells()),
                move=move,
            )
        remaining = self._remaining()
        for place in move.placements:
            reason = self._token_problem(place, remaining)
            if reason is not None:
                return Verdict.illegal(reason, place.hole, move=move)
            remaining[self.box.by_code[place.token].name] -= 1
        return None

    def _apply(self, move: Move) -> None:
        s = self.state
        places = move.placements if isinstance(move, Opening) else (move,)
        opening = self._in_opening()
        for place in places:
            s.board[self.box.index[place.hole]] = self.box.by_code[place.token].name
        if opening:
            s.turn = s.turn + 1 if self._in_opening() else self._first
        else:
            s.scores[1 - s.turn] += self._points(self.box.index[places[0].hole])
            s.turn = 1 - s.turn

    def changes_after(self, move: Move) -> dict[str, Content]:
        """Hole -> token name for the holes a legal ``move`` fills (the state is kept)."""
        places = move.placements if isinstance(move, Opening) else (move,)
        return {p.hole: self.box.by_code[p.token].name for p in places}

    def parse_move(self, text: str) -> Move:
        """``WS@c3`` -> Place; ``BC@d2+WS@e2`` -> Opening."""
        parts = text.strip().split("+")
        if len(parts) > len(self.box.opening):
            raise FormatError(
                f"not a gobsmacked move: {shown(text)} (at most {len(self.box.opening)} tokens)"
            )
        places = tuple(self._parse_place(part) for part in parts)
        return places[0] if len(places) == 1 else Opening(places)

    def _parse_place(self, text: str) -> Place:
        code, at, hole = text.partition("@")
        if not at or code not in self.box.by_code or hole not in self.box.index:
            raise FormatError(
                f"not a gobsmacked placement: {shown(text)}; expected CODE@HOLE like WS@c3, "
                "CODE one of " + ", ".join(self.box.by_code)
            )
        return Place(code, hole)

    # ----------------------------------------------------------------- inference
    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        """One token placed: that Place (legal or illegal); both opening tokens on an empty
        board: the Opening. A token removed or changed, a used-up token or several tokens at
        once: ambiguous."""
        order = [h for h in self.box.holes if h in changes]
        moved = [h for h in order if changes[h][0] is not None]
        if moved:
            return Verdict.ambiguous(self._moved_reason(moved, changes), *moved)
        placed = {h: changes[h][1] for h in order}
        short = self._used_up(placed)
        if short is not None:
            return short
        places = tuple(Place(self.box.by_name[t].code, h) for h, t in placed.items())
        if len(places) == 1:
            move: Move = places[0]
        elif len(places) == len(self.box.opening) and not any(self.state.board):
            move = Opening(places)
        else:
            return Verdict.ambiguous(
                f"{len(places)} tokens placed ({', '.join(placed)}): one token per turn", *placed
            )
        return self.check(move) or Verdict(MOVE, move=move)

    @staticmethod
    def _moved_reason(moved: list[str], changes: Changes) -> str:
        if len(moved) > 1:
            return f"tokens changed or removed at {', '.join(moved)}: placed tokens never move"
        hole = moved[0]
        was, seen = changes[hole]
        what = "was removed" if seen is None else f"turned into a {seen}"
        return f"the {was} at {hole} {what}: placed tokens never move"

    def _used_up(self, placed: Mapping[str, Content]) -> Verdict | None:
        """Ambiguous when more tokens of a kind appear than the supply still holds."""
        remaining = self._remaining()
        for token in placed.values():
            remaining[token] -= 1  # type: ignore[index]
        short = [h for h, t in placed.items() if remaining[t] < 0]  # type: ignore[index]
        if not short:
            return None
        kind = self.box.by_name[placed[short[0]]]  # type: ignore[index]
        return Verdict.ambiguous(
            f"{', '.join(short)}: no {kind.name} left (the set has {kind.count}, all on the "
            "board already); a misread or foreign token?",
            *short,
        )

    # ----------------------------------------------------------------- events
    def _check_event(self, event: Event) -> Verdict | None:
        if event.name == "resign" and event.player not in (None, *PLAYERS):
            return Verdict.illegal(f"unknown player {shown(event.player)}")
        if event.name in ("resign", "end"):
            return None
        return super()._check_event(event)

    def _apply_event(self, event: Event) -> None:
        if event.name == "resign":
            self.state.resigned = PLAYERS.index(event.player or PLAYERS[self.state.turn])
        else:
            self.state.ended = True
