"""Blokus for two: the 144-square "Blokus 2 joueurs" edition and Blokus Duo (14x14).

The rules, as ``shared/rules/blokus-2p.fr.txt`` gives them:

- Each player has a set of pieces of one colour (orange, violet), all of different shapes; a
  piece may be turned and flipped.
- Player 1's first piece covers one of the two start points, player 2's first piece the other.
- Players take turns placing one piece. Every new piece touches a piece of its own colour, but
  only at a corner: pieces of the same colour never share an edge. Pieces of different colours
  may touch in any way. A placed piece never moves.
- A player who cannot place any piece passes (the referee passes for them); the game ends when
  neither player can place a piece, which includes a player having placed all of them.
- Basic scoring: the fewest squares left wins. Advanced scoring: -1 a square left, +15 when every
  piece is placed, +5 more when the last one placed was the monomino.

The board, the start points, the piece set and the bonuses come from ``engine/data/NAME.json``.
Positions are Python int bitboards: square (file, rank) is bit ``rank * width + file`` with
``width = size + 1``; the spare column stays empty, so shifting a mask never wraps a row.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from .core import (
    DRAW,
    EVENT,
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
from .data import load
from .grid import parse_square, square_names

PLAYERS = ("orange", "violet")
SCORINGS = ("advanced", "basic")
OPTIONS = ("players", "teams", "first", "scoring", "data")

Square = tuple[int, int]


def _reading_order(square: str) -> tuple[int, str]:
    """Sort key of the move notation: top rank first, then left to right."""
    return -int(square[1:]), square[0]


@dataclass(frozen=True)
class Placement(Move):
    """One piece put on the board, written ``T5@d9,e9,f9,e8,e7``: piece name @ its squares.

    The squares are kept in reading order (top rank first, left to right within a rank), so
    placements of the same piece on the same squares are equal however they were written.
    """

    piece: str
    squares: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "squares", tuple(sorted(self.squares, key=_reading_order)))

    def __str__(self) -> str:
        return f"{self.piece}@{','.join(self.squares)}"

    def cells(self) -> tuple[str, ...]:
        """The squares the piece covers."""
        return self.squares


def orientations(squares: Sequence[Square]) -> set[frozenset[Square]]:
    """Every rotation and reflection of a shape, each shifted to touch x = 0 and y = 0."""
    shapes = set()
    for sx in (1, -1):
        for sy in (1, -1):
            for turned in (False, True):
                points = [(sy * y, sx * x) if turned else (sx * x, sy * y) for x, y in squares]
                left, bottom = min(x for x, _ in points), min(y for _, y in points)
                shapes.add(frozenset((x - left, y - bottom) for x, y in points))
    return shapes


class Edition:
    """A board, its start points, its piece set and bonuses, with every placement precomputed.

    Immutable and shared by all games of one data file (``copy.deepcopy`` returns it as is).
    """

    def __init__(
        self,
        size: int,
        start_points: Sequence[str],
        pieces: Mapping[str, Sequence[Square]],
        scoring: Mapping[str, Any],
    ) -> None:
        self.size = size
        self.width = size + 1
        self.cell_names = square_names(size, size)
        self.bit = {name: self._index(*parse_square(name)) for name in self.cell_names}
        self._name_at = {i: name for name, i in self.bit.items()}
        self.full = sum(1 << i for i in self.bit.values())
        self.start = sum(1 << self.bit[name] for name in start_points)
        self.view_bits = tuple((name, 1 << i) for name, i in self.bit.items())
        self.piece_names = tuple(pieces)
        self.total_squares = sum(len(squares) for squares in pieces.values())
        self.all_placed_bonus = int(scoring["all_placed_bonus"])
        self.last_piece = self.piece_names.index(scoring["last_piece"])
        self.last_piece_bonus = int(scoring["last_piece_bonus"])
        # every placement on the board: by move, by mask, and by (square, piece) for the search
        self.placements: dict[Placement, tuple[int, int]] = {}
        self.by_mask: dict[int, Placement] = {}
        by_cell: list[list[list[tuple[int, Placement]]]] = [
            [[] for _ in pieces] for _ in range(self.width * size)
        ]
        for k, (piece, squares) in enumerate(pieces.items()):
            for shape in sorted(orientations(squares), key=sorted):
                for x0 in range(size - max(x for x, _ in shape)):
                    for y0 in range(size - max(y for _, y in shape)):
                        cells = [self._index(x0 + x, y0 + y) for x, y in shape]
                        mask = sum(1 << i for i in cells)
                        move = Placement(piece, tuple(self._name_at[i] for i in cells))
                        self.placements[move] = (k, mask)
                        self.by_mask[mask] = move
                        for i in cells:
                            by_cell[i][k].append((mask, move))
        self.by_cell = tuple(tuple(map(tuple, row)) for row in by_cell)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Edition:
        """Read and check a data file's content; :class:`FormatError` says what is wrong."""
        try:
            size = int(data["board"]["size"])
            starts = [str(name) for name in data["board"]["start_points"]]
            pieces = {
                str(p["name"]): [(int(x), int(y)) for x, y in p["squares"]] for p in data["pieces"]
            }
            scoring = dict(data["scoring"])
        except (KeyError, TypeError, ValueError) as exc:
            raise FormatError(f"bad Blokus data file: missing or malformed {exc}") from None
        if not 1 <= size <= 26:
            raise FormatError(f"bad Blokus data file: board size {size} is not 1..26")
        names = set(square_names(size, size))
        if len(set(starts)) != 2 or not names.issuperset(starts):
            raise FormatError(f"bad Blokus data file: need two start points on the board: {starts}")
        if len(pieces) != len(data["pieces"]) or any("@" in p or "," in p for p in pieces):
            raise FormatError("bad Blokus data file: piece names must be unique, without @ or ,")
        shapes: dict[frozenset[Square], str] = {}
        for piece, squares in pieces.items():
            if not squares or len(set(squares)) != len(squares):
                raise FormatError(f"bad Blokus data file: {piece} has no or repeated squares")
            for shape in orientations(squares):
                if shapes.setdefault(shape, piece) != piece:
                    raise FormatError(f"bad Blokus data file: {piece} is {shapes[shape]} again")
        if scoring.get("last_piece") not in pieces:
            raise FormatError("bad Blokus data file: scoring.last_piece is not a piece")
        return cls(size, starts, pieces, scoring)

    def __deepcopy__(self, memo: dict[int, Any]) -> Edition:
        return self

    def _index(self, x: int, y: int) -> int:
        return y * self.width + x

    # ----------------------------------------------------------------- masks
    def edges(self, mask: int) -> int:
        """The squares sharing an edge with ``mask`` (outside it)."""
        w = self.width
        return ((mask << 1) | (mask >> 1) | (mask << w) | (mask >> w)) & self.full & ~mask

    def corners(self, mask: int) -> int:
        """The squares touching ``mask`` diagonally (outside it)."""
        w = self.width
        near = (mask << (w + 1)) | (mask << (w - 1)) | (mask >> (w - 1)) | (mask >> (w + 1))
        return near & self.full & ~mask

    def names(self, mask: int) -> tuple[str, ...]:
        """The squares of ``mask`` by name, in reading order."""
        return tuple(sorted((self._name_at[i] for i in _bits(mask)), key=_reading_order))

    def groups(self, mask: int) -> int:
        """How many edge-connected groups of squares ``mask`` holds."""
        count = 0
        while mask:
            group, grown = 0, mask & -mask
            while grown != group:
                group = grown
                grown = (group | self.edges(group)) & mask
            mask &= ~group
            count += 1
        return count


def _bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@cache
def edition(name: str, path: str | None = None) -> Edition:
    """The edition of data file ``engine/data/NAME.json`` (or the file at ``path``)."""
    try:
        data = load(name, path)
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read the {name} data file: {exc}") from None
    return Edition.from_data(data)


@dataclass(frozen=True)
class BlokusState:
    """Everything that changes during a game, per player in turn order. Immutable: play and
    undo swap whole states, so copying one is free."""

    occupied: tuple[int, int] = (0, 0)  # bitboard of each player's squares
    used: tuple[int, int] = (0, 0)  # bit k set: piece k is on the board
    last: tuple[int | None, int | None] = (None, None)  # index of the piece placed last
    turn: int | None = 0  # the player to move; None once the game is over
    resigned: int | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> BlokusState:
        return self


def _with(pair: tuple[Any, Any], i: int, value: Any) -> tuple[Any, Any]:
    return (value, pair[1]) if i == 0 else (pair[0], value)


def _turn_order(given: Mapping[str, Any], name: str) -> tuple[str, str]:
    """The players in turn order from the ``players`` and ``first`` options."""
    players = given.get("players", 2)
    if isinstance(players, list | tuple) and sorted(players) == sorted(PLAYERS):
        order = tuple(players)
    elif players == 2 and type(players) is int:
        order = PLAYERS
    else:
        raise FormatError(f"{name} is for 2 players, orange and violet, not {shown(players)}")
    first = given.get("first", order[0])
    if first not in PLAYERS:
        raise FormatError(f"first player must be orange or violet, not {shown(first)}")
    return (first, order[1] if first == order[0] else order[0])


class Blokus(Game):
    """Blokus, two-player edition: a 12x12 board, 16 pieces a colour (``blokus.json``).

    Options: ``players`` (2, or the two colours in turn order), ``first`` (when neither is
    given, the colour of the first piece placed),
    ``scoring`` ("advanced", the default, or "basic") and ``data`` (another data file).
    """

    name = "blokus"
    description = "Blokus, two-player edition: 12x12 board, 16 orange and 16 violet pieces"
    #: "the youngest player starts": without ``first``, the colour of the first piece decides
    opening_decides_first = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        given = {key: value for key, value in options.items() if value is not None}
        unknown = sorted(set(given) - set(OPTIONS))
        if unknown:
            raise FormatError(f"unknown option(s) for {self.name}: {', '.join(unknown)}")
        if given.get("teams"):
            raise FormatError(f"{self.name} has no teams")
        self.scoring = given.get("scoring", "advanced")
        if self.scoring not in SCORINGS:
            raise FormatError(f"scoring must be advanced or basic, not {shown(self.scoring)}")
        self._players = _turn_order(given, self.name)
        data = given.get("data")
        self.edition = edition(self.name, None if data is None else str(data))
        self.state = BlokusState(turn=self._next_turn(BlokusState(), 1))

    # ----------------------------------------------------------------- who and how much
    @property
    def players(self) -> tuple[str, ...]:
        return self._players

    @property
    def to_move(self) -> str | None:
        turn = self.state.turn
        return None if turn is None else self._players[turn]

    @property
    def squares_left(self) -> dict[str, int]:
        """Player -> squares of the pieces not placed yet."""
        total = self.edition.total_squares
        return {
            p: total - mask.bit_count()
            for p, mask in zip(self._players, self.state.occupied, strict=True)
        }

    @property
    def scores(self) -> dict[str, int]:
        """Basic: squares left (fewest wins). Advanced: -1 a square left, +15 with every piece
        placed, +5 more when the last one was the monomino (highest wins)."""
        left = self.squares_left
        if self.scoring == "basic":
            return left
        ed, s = self.edition, self.state
        all_placed = (1 << len(ed.piece_names)) - 1
        scores = {}
        for i, player in enumerate(self._players):
            score = -left[player]
            if s.used[i] == all_placed:
                score += ed.all_placed_bonus
                if s.last[i] == ed.last_piece:
                    score += ed.last_piece_bonus
            scores[player] = score
        return scores

    @property
    def is_over(self) -> bool:
        return self.state.turn is None

    @property
    def winner(self) -> str | None:
        if not self.is_over:
            return None
        if self.state.resigned is not None:
            return self._players[1 - self.state.resigned]
        first, second = (self.scores[p] for p in self._players)
        if first == second:
            return DRAW
        first_wins = first < second if self.scoring == "basic" else first > second
        return self._players[0 if first_wins else 1]

    # ----------------------------------------------------------------- board
    @property
    def cell_names(self) -> tuple[str, ...]:
        return self.edition.cell_names

    def view(self) -> dict[str, Content]:
        first, second = self.state.occupied
        one, two = self._players
        return {
            name: one if first & bit else (two if second & bit else None)
            for name, bit in self.edition.view_bits
        }

    def cell_from_json(self, value: Any) -> Content:
        if value is None or value in PLAYERS:
            return value
        raise FormatError(f'expected "orange", "violet" or null, got {shown(value)}')

    def cell_to_json(self, content: Content) -> Any:
        return content

    def owner(self, content: Content) -> str | None:
        """A square's colour is its player."""
        return content if content in PLAYERS else None

    # ----------------------------------------------------------------- moves
    def legal_moves(self) -> Iterator[Placement]:
        turn = self.state.turn
        if turn is None:
            return
        seen: set[Placement] = set()
        for fits in self._fits(self.state, turn):
            for move in fits:
                if move not in seen:
                    seen.add(move)
                    yield move

    def random_move(self, rng: random.Random) -> Placement:
        """A random legal placement (the player to move always has one: see _next_turn)."""
        if self.state.turn is None:
            raise RefereeError("the game is over")
        return rng.choice(next(self._fits(self.state, self.state.turn, rng)))

    def check(self, move: Move) -> Verdict | None:
        s, ed = self.state, self.edition
        if s.turn is None:
            return Verdict.illegal("the game is over")
        placed = ed.placements.get(move) if isinstance(move, Placement) else None
        if placed is None:
            if not isinstance(move, Placement) or move.piece not in ed.piece_names:
                return Verdict.illegal(f"{move} is no piece of the {self.name} set")
            where = ", ".join(move.squares)
            return Verdict.illegal(f"{where} is not the shape of the {move.piece}", *move.squares)
        k, mask = placed
        player, own = self._players[s.turn], s.occupied[s.turn]
        taken, cells = s.occupied[0] | s.occupied[1], move.squares
        if s.used[s.turn] >> k & 1:
            return Verdict.illegal(f"{player} has already played the {move.piece}", *cells)
        covered = ed.names(mask & taken)
        if covered:
            return Verdict.illegal(f"{', '.join(covered)}: already covered", *covered)
        if not own:  # the first piece covers a start point still free
            free = ed.start & ~taken
            if mask & free:
                return None
            starts = " or ".join(ed.names(free))
            return Verdict.illegal(f"{player}'s first piece must cover {starts}", *cells)
        touching = ed.names(mask & ed.edges(own))
        if touching:
            where = ", ".join(touching)
            return Verdict.illegal(
                f"{player} piece touches {player} by an edge at {where}", *touching
            )
        if not mask & ed.corners(own):
            return Verdict.illegal(f"{player} piece touches no {player} piece at a corner", *cells)
        return None

    def _apply(self, move: Move) -> None:
        k, mask = self.edition.placements[move]  # type: ignore[index]
        s = self.state
        i = s.turn
        assert i is not None
        after = replace(
            s,
            occupied=_with(s.occupied, i, s.occupied[i] | mask),
            used=_with(s.used, i, s.used[i] | 1 << k),
            last=_with(s.last, i, k),
        )
        self.state = replace(after, turn=self._next_turn(after, i))

    def _next_turn(self, state: BlokusState, mover: int) -> int | None:
        """The next player who can place a piece (the other one first), None if neither can."""
        for i in (1 - mover, mover):
            if next(self._fits(state, i), None) is not None:
                return i
        return None

    def _fits(
        self, state: BlokusState, i: int, rng: random.Random | None = None
    ) -> Iterator[list[Placement]]:
        """Player ``i``'s legal placements, grouped by (anchor square, piece); never empty groups.

        An anchor is a free square where the next piece may touch its own colour at a corner (a
        free start point for the first piece); every legal placement covers one. With ``rng`` the
        anchors and pieces come in random order."""
        ed = self.edition
        own, taken = state.occupied[i], state.occupied[0] | state.occupied[1]
        if own:
            blocked = taken | ed.edges(own)
            anchors = list(_bits(ed.corners(own) & ~blocked))
        else:
            blocked = taken
            anchors = list(_bits(ed.start & ~taken))
        pieces = [k for k in range(len(ed.piece_names)) if not state.used[i] >> k & 1]
        if rng is not None:
            rng.shuffle(anchors)
            rng.shuffle(pieces)
        for anchor in anchors:
            table = ed.by_cell[anchor]
            for k in pieces:
                fits = [move for mask, move in table[k] if not mask & blocked]
                if fits:
                    yield fits

    def changes_after(self, move: Move) -> dict[str, Content]:
        """The move's squares, in the colour of the player to move."""
        return dict.fromkeys(move.cells(), self.to_move)

    def parse_move(self, text: str) -> Placement:
        """Read ``PIECE@SQUARE,SQUARE,...`` (squares in any order), e.g. ``T5@d9,e9,f9,e8,e7``."""
        piece, at, rest = text.strip().partition("@")
        if not at or not piece or not rest:
            raise FormatError(f"not a Blokus move: {shown(text)} (expected e.g. T5@d9,e9,f9,e8,e7)")
        if piece not in self.edition.piece_names:
            known = ", ".join(self.edition.piece_names)
            raise FormatError(f"unknown piece {shown(piece)}; the {self.name} pieces are {known}")
        squares = [square.strip() for square in rest.split(",")]
        for square in squares:
            if square not in self.edition.bit:
                raise FormatError(f"{shown(square)} is not a square of the {self.name} board")
        if len(set(squares)) != len(squares):
            raise FormatError(f"a square is listed twice in {shown(text)}")
        return Placement(piece, tuple(squares))

    # ----------------------------------------------------------------- inference
    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        """One piece of one colour on empty squares: that placement (or why it is illegal)."""
        changed = sorted(changes, key=_reading_order)
        moved = [name for name in changed if changes[name][0] is not None]
        if moved:
            return Verdict.ambiguous(
                f"{', '.join(moved)}: placed squares changed colour or vanished "
                "(pieces never move once placed)",
                *moved,
            )
        colours = {seen for _, seen in changes.values()}
        if len(colours) > 1:
            return Verdict.ambiguous("new squares of both colours: one piece at a time", *changed)
        colour = colours.pop()
        mask = sum(1 << self.edition.bit[name] for name in changed)
        move = self.edition.by_mask.get(mask)
        if move is None:
            groups = self.edition.groups(mask)
            if groups > 1:
                why = f"new {colour} squares form {groups} separate groups, not one piece"
            else:
                why = f"new {colour} squares {', '.join(changed)} are no piece of the set"
            return Verdict.ambiguous(why, *changed)
        if colour != self.to_move:
            return Verdict.illegal(f"it is {self.to_move}'s turn", *changed, move=move)
        return self.check(move) or Verdict(MOVE, move=move)

    # ----------------------------------------------------------------- events
    def handle(self, event: Event) -> Verdict:
        """Events as in :meth:`Game.handle`; a ``pass`` pressed by a player who cannot move is
        acknowledged without changing anything (the referee already passed for them)."""
        if (
            event.name == "pass"
            and not self.is_over
            and event.player in self._players
            and event.player != self.to_move
        ):
            i = self._players.index(event.player)
            if next(self._fits(self.state, i), None) is None:
                return Verdict(EVENT, event=event, reason=f"{event.player} cannot move: passed")
        return super().handle(event)

    def _check_event(self, event: Event) -> Verdict | None:
        if event.name == "pass":
            # a player who cannot place a piece is passed automatically, so to_move always can
            return Verdict.illegal(f"{self.to_move} can still place a piece")
        if event.name == "resign" and event.player not in (None, *self._players):
            return Verdict.illegal(f"unknown player {shown(event.player)}")
        if event.name in ("end", "resign"):
            return None
        return super()._check_event(event)

    def _apply_event(self, event: Event) -> None:
        if event.name == "resign":
            loser = self._players.index(event.player or self.to_move)
            self.state = replace(self.state, turn=None, resigned=loser)
        else:  # end: the players stop here; the scores decide
            self.state = replace(self.state, turn=None)


class BlokusDuo(Blokus):
    """Blokus Duo: the same rules on a 14x14 board with the 21 standard pieces
    (``blokus-duo.json``)."""

    name = "blokus-duo"
    description = "Blokus Duo: 14x14 board, 21 orange and 21 violet pieces"
