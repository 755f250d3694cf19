"""Gobblet (Gigamic): line up four visible pieces of your colour, gobbling smaller ones.

The rulebook (``shared/rules/gobblet.*.txt`` and the Gobblet section of the rules README):

* **Setting up**: each player's 12 Gobblers wait off the board in 3 external stacks of 4 nested
  pieces, the biggest on top; only a stack's top may be played.
* **A turn** is either :class:`Place` (a stack's top onto an empty square, or onto a smaller
  opponent piece of a visible line of 3 opponent pieces) or :class:`Shift` (lift one of your
  visible pieces and put it on an empty square or on any smaller piece, never back where it was).
* **Winning**: four visible pieces of one colour in a row, column or diagonal. Uncovering the
  opponent's line, or completing lines for both players at once, loses. Threefold repetition of a
  position draws.

The camera sees only each square's top piece; the engine tracks every stack, so it knows what a
lift uncovers. Board side, sizes, stack count and repetitions come from
``engine/data/gobblet.json``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from itertools import permutations
from typing import Any, NamedTuple

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
from .grid import square_names

PLAYERS = ("white", "black")
OPPONENT = {"white": "black", "black": "white"}
OPTIONS = ("players", "teams", "first", "scoring", "data")

_PLACE = re.compile(r"(\d+)@([a-z]\d+)")
_SHIFT = re.compile(r"([a-z]\d+)-([a-z]\d+)")


class Piece(NamedTuple):
    """A Gobbler: canonical content of a square (its visible top)."""

    color: str
    size: int

    def __str__(self) -> str:
        return f"{self.color} {self.size}"


def describe(content: Piece | None) -> str:
    """``the white 3`` or ``an empty square``, for reasons."""
    return "an empty square" if content is None else f"the {content}"


@dataclass(frozen=True)
class Place(Move):
    """Put the size-``size`` top of one of the mover's external stacks on ``target``: ``3@b2``."""

    size: int
    target: str

    def __str__(self) -> str:
        return f"{self.size}@{self.target}"

    def cells(self) -> tuple[str, ...]:
        """The square the new piece goes to."""
        return (self.target,)


@dataclass(frozen=True)
class Shift(Move):
    """Lift the mover's visible piece at ``source`` and put it on ``target``: ``a1-b2``."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}-{self.target}"

    def cells(self) -> tuple[str, ...]:
        """The square lifted from, then the square put on."""
        return (self.source, self.target)


@dataclass(frozen=True)
class Layout:
    """Board geometry and piece counts, from ``engine/data/gobblet.json``."""

    side: int
    sizes: int
    stacks: int
    repetitions: int
    cells: tuple[str, ...]
    index: Mapping[str, int]
    lines: tuple[tuple[int, ...], ...]
    """Rows, columns and the two diagonals, as square indexes."""
    lines_through: tuple[tuple[tuple[int, ...], ...], ...]
    """Per square index, the lines through it."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Layout:
        return self

    @classmethod
    def from_data(cls, obj: Mapping[str, Any]) -> Layout:
        """Validate the data file's counts and derive the squares and lines."""
        counts = {}
        for key, least in (("board_size", 2), ("sizes", 1), ("stacks", 1), ("draw_repetitions", 2)):
            value = obj.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise FormatError(f"gobblet data: {key} must be an integer >= {least}")
            counts[key] = value
        n = counts["board_size"]
        if n > 26:
            raise FormatError("gobblet data: board_size must be at most 26")
        lines = [tuple(r * n + c for c in range(n)) for r in range(n)]
        lines += [tuple(r * n + c for r in range(n)) for c in range(n)]
        lines += [tuple(i * n + i for i in range(n)), tuple(i * n + n - 1 - i for i in range(n))]
        cells = square_names(n, n)
        return cls(
            side=n,
            sizes=counts["sizes"],
            stacks=counts["stacks"],
            repetitions=counts["draw_repetitions"],
            cells=cells,
            index={name: i for i, name in enumerate(cells)},
            lines=tuple(lines),
            lines_through=tuple(tuple(ln for ln in lines if i in ln) for i in range(n * n)),
        )


@cache
def load_layout(path: str | None = None) -> Layout:
    """The layout of the default data file, or of the file at ``path``."""
    try:
        obj = data.load("gobblet", path)
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read gobblet data {path}: {exc}") from None
    if not isinstance(obj, Mapping):
        raise FormatError("gobblet data must be a JSON object")
    return Layout.from_data(obj)


@dataclass(frozen=True)
class Position:
    """Everything that changes during a game. Immutable, so undo snapshots share it."""

    board: tuple[tuple[Piece, ...], ...]
    """Per square (in ``cell_names`` order), its stack, bottom piece first."""
    external: tuple[tuple[int, ...], ...]
    """Per entry of :data:`PLAYERS`, the heights of the external stacks, largest first."""
    to_move: str
    result: str | None = None
    """The winner, :data:`DRAW`, or ``None`` while the game goes on."""
    seen: tuple[Hashable, ...] = ()
    """Repetition keys since the last new piece entered play (positions before it cannot recur)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Position:
        return self

    @property
    def key(self) -> Hashable:
        """What makes two positions the same for the repetition rule."""
        return (self.board, self.external, self.to_move)


def _take(heights: tuple[int, ...], size: int) -> tuple[int, ...]:
    """External stack heights after playing the top (size ``size``) of a stack that high."""
    i = heights.index(size)
    return tuple(sorted((*heights[:i], size - 1, *heights[i + 1 :]), reverse=True))


def _names_both_players(players: Any) -> bool:
    """True for a list naming white and black once each, in either order."""
    return (
        isinstance(players, list | tuple)
        and all(isinstance(p, str) for p in players)
        and sorted(players) == sorted(PLAYERS)
    )


class Gobblet(Game):
    """Gobblet on a 4x4 board, white against black. Options: ``players`` (2, or both colours),
    ``first`` (when not given, the colour of the first piece placed) and ``data``."""

    name = "gobblet"
    description = "Gobblet (Gigamic): line up 4 visible pieces of your colour, gobbling smaller"
    #: the rulebook names no first colour: without ``first``, the first piece placed decides
    opening_decides_first = True

    def __init__(self, **options: Any) -> None:
        given = {k: v for k, v in options.items() if v is not None}
        super().__init__(**given)
        unknown = sorted(set(given) - set(OPTIONS))
        if unknown:
            raise FormatError(
                f"gobblet has no option {shown(unknown[0])}; known: players, first, data"
            )
        players = given.get("players", 2)
        if players != 2 and not _names_both_players(players):
            raise FormatError(f"gobblet is for 2 players, white and black; got {shown(players)}")
        if given.get("teams"):
            raise FormatError("gobblet is played one against one: no teams")
        if "scoring" in given:
            raise FormatError("gobblet has no scoring variants")
        first = given.get("first", PLAYERS[0])
        if first not in PLAYERS:
            raise FormatError(f"the first player must be white or black, got {shown(first)}")
        path = given.get("data")
        self.layout = load_layout(None if path is None else str(path))
        self._order = (first, OPPONENT[first])
        full = (self.layout.sizes,) * self.layout.stacks
        start = Position(((),) * len(self.layout.cells), (full, full), first)
        self.state: Position = replace(start, seen=(start.key,))

    # ----------------------------------------------------------------- who and how much
    @property
    def players(self) -> tuple[str, ...]:
        """``white`` and ``black``, the first player first."""
        return self._order

    @property
    def to_move(self) -> str | None:
        """The player whose turn it is (``None`` once the game is over)."""
        return None if self.state.result is not None else self.state.to_move

    @property
    def scores(self) -> dict[str, int]:
        """1 for the winner, 0 otherwise (a draw scores 0 each)."""
        return {p: int(self.state.result == p) for p in PLAYERS}

    @property
    def is_over(self) -> bool:
        """True once somebody won, the game was drawn, or a player resigned."""
        return self.state.result is not None

    @property
    def winner(self) -> str | None:
        """The winner, :data:`DRAW`, or ``None`` while the game goes on."""
        return self.state.result

    def external_stacks(self, player: str) -> tuple[int, ...]:
        """Heights of ``player``'s external stacks, largest first (a stack's top is its height)."""
        return self.state.external[PLAYERS.index(player)]

    # ----------------------------------------------------------------- board
    @property
    def cell_names(self) -> tuple[str, ...]:
        """``a1`` .. ``d4``, rank by rank."""
        return self.layout.cells

    def view(self) -> dict[str, Content]:
        """Each square's visible top piece (``None`` when empty)."""
        return {
            n: s[-1] if s else None
            for n, s in zip(self.layout.cells, self.state.board, strict=True)
        }

    def stack(self, square: str) -> tuple[Piece, ...]:
        """The pieces on ``square``, bottom first (the camera sees only the last)."""
        return self.state.board[self.layout.index[square]]

    def cell_from_json(self, value: Any) -> Content:
        """``null`` or ``{"color": "white"|"black", "size": 1..4}`` -> ``None`` or a Piece."""
        if value is None:
            return None
        if not isinstance(value, Mapping) or set(value) != {"color", "size"}:
            raise FormatError(f'expected null or {{"color": ..., "size": ...}}, got {shown(value)}')
        color, size = value["color"], value["size"]
        if color not in PLAYERS:
            raise FormatError(f"unknown colour {shown(color)}; expected white or black")
        if (
            not isinstance(size, int)
            or isinstance(size, bool)
            or not 1 <= size <= self.layout.sizes
        ):
            raise FormatError(f"size must be an integer 1..{self.layout.sizes}, got {shown(size)}")
        return Piece(color, size)

    def owner(self, content: Content) -> str | None:
        """A piece's colour is its player."""
        return content.color if isinstance(content, Piece) else None

    def can_cover(self, under: Content, over: Content) -> bool:
        """A larger piece fits over a smaller one."""
        return isinstance(under, Piece) and isinstance(over, Piece) and over.size > under.size

    def cell_to_json(self, content: Content) -> Any:
        """A Piece -> ``{"color": ..., "size": ...}``; ``None`` -> ``null``."""
        if content is None:
            return None
        assert isinstance(content, Piece)
        return {"color": content.color, "size": content.size}

    def _top(self, square: str) -> Piece | None:
        stack = self.stack(square)
        return stack[-1] if stack else None

    def _under(self, square: str) -> Piece | None:
        """The piece a lift at ``square`` uncovers (``None``: the square becomes empty)."""
        stack = self.stack(square)
        return stack[-2] if len(stack) > 1 else None

    def _colors(self) -> list[str | None]:
        """Per square index, the colour of the visible top (``None`` when empty)."""
        return [s[-1].color if s else None for s in self.state.board]

    def _in_line_of_three(self, colors: list[str | None], i: int) -> bool:
        """True when the piece at index ``i`` is one of a line of 3 visible pieces of its colour
        (one short of a win: ``board_size - 1``); only such a piece may be gobbled by a new one."""
        short = self.layout.side - 1
        return any(
            sum(colors[k] == colors[i] for k in line) == short
            for line in self.layout.lines_through[i]
        )

    def _line_owners(self, board: tuple[tuple[Piece, ...], ...]) -> set[str]:
        """Colours with a full visible line on ``board``."""
        colors = [s[-1].color if s else None for s in board]
        return {
            colors[line[0]]  # type: ignore[misc]
            for line in self.layout.lines
            if colors[line[0]] is not None and all(colors[k] == colors[line[0]] for k in line)
        }

    # ----------------------------------------------------------------- moves
    def parse_move(self, text: str) -> Move:
        """``3@b2`` (a new piece of size 3 on b2) or ``a1-b2`` (the piece on a1 moves to b2)."""
        text = text.strip()
        if m := _PLACE.fullmatch(text):
            size = int(m[1])
            if not 1 <= size <= self.layout.sizes:
                raise FormatError(f"{shown(text)}: sizes are 1..{self.layout.sizes}")
            return Place(size, self._square(m[2]))
        if m := _SHIFT.fullmatch(text):
            return Shift(self._square(m[1]), self._square(m[2]))
        raise FormatError(f"not a gobblet move: {shown(text)} (expected e.g. 3@b2 or a1-b2)")

    def _square(self, name: str) -> str:
        if name not in self.layout.index:
            raise FormatError(
                f"no square {shown(name)} on the {self.layout.side}x{self.layout.side} board"
            )
        return name

    def legal_moves(self) -> Iterator[Move]:
        """New pieces, biggest first, then moves of the mover's visible pieces."""
        if self.state.result is not None:
            return
        me, cells = self.state.to_move, self.layout.cells
        tops = [s[-1] if s else None for s in self.state.board]
        colors = self._colors()
        for size in sorted(set(self.external_stacks(me)) - {0}, reverse=True):
            for i, top in enumerate(tops):
                if top is None or (
                    top.color != me and top.size < size and self._in_line_of_three(colors, i)
                ):
                    yield Place(size, cells[i])
        for i, piece in enumerate(tops):
            if piece is not None and piece.color == me:
                for j, top in enumerate(tops):
                    if j != i and (top is None or top.size < piece.size):
                        yield Shift(cells[i], cells[j])

    def check(self, move: Move) -> Verdict | None:
        """``None`` when ``move`` is legal now, else why not (naming the squares)."""
        if self.state.result is not None:
            return Verdict.illegal("the game is over", *move.cells(), move=move)
        unknown = [c for c in move.cells() if c not in self.layout.index]
        if unknown or not isinstance(move, Place | Shift):
            return Verdict.illegal(f"not a move on this board: {move}", *unknown, move=move)
        if isinstance(move, Place):
            return self._check_place(move)
        return self._check_shift(move)

    def _check_place(self, move: Place) -> Verdict | None:
        me, to = self.state.to_move, move.target
        heights = self.external_stacks(me)
        if move.size not in heights:
            reason = f"{to}: size {move.size} is not on top of any of {me}'s external stacks"
            return Verdict.illegal(reason, to, move=move)
        top = self._top(to)
        if top is None:
            return None
        if top.color == me:
            reason = f"{to}: a new piece may not gobble one of your own pieces"
        elif not self._in_line_of_three(self._colors(), self.layout.index[to]):
            short = self.layout.side - 1
            reason = f"{to}: a new piece may only gobble a piece of a line of {short}"
        elif top.size >= move.size:
            reason = f"{to}: a piece may only gobble a smaller one"
        else:
            return None
        return Verdict.illegal(reason, to, move=move)

    def _check_shift(self, move: Shift) -> Verdict | None:
        me, src, to = self.state.to_move, move.source, move.target
        piece, top = self._top(src), self._top(to)
        if src == to:
            return Verdict.illegal(
                f"{src}: a piece may not go back to its own square", src, move=move
            )
        if piece is None:
            return Verdict.illegal(f"{src}: there is no piece to move", src, move=move)
        if piece.color != me:
            return Verdict.illegal(f"it is {me}'s turn", src, to, move=move)
        if top is not None and top.size >= piece.size:
            return Verdict.illegal(f"{to}: a piece may only gobble a smaller one", to, move=move)
        return None

    def _apply(self, move: Move) -> None:
        p = self.state
        me = p.to_move
        board = list(p.board)
        external = p.external
        if isinstance(move, Place):
            i = self.layout.index[move.target]
            board[i] += (Piece(me, move.size),)
            mine = PLAYERS.index(me)
            external = tuple(
                _take(h, move.size) if k == mine else h for k, h in enumerate(external)
            )
        else:
            assert isinstance(move, Shift)
            i, j = self.layout.index[move.source], self.layout.index[move.target]
            board[j] += board[i][-1:]
            board[i] = board[i][:-1]
        new_board = tuple(board)
        owners = self._line_owners(new_board)
        # A line uncovered for the opponent (not re-covered by the moved piece) or completed for
        # both players at once wins for the opponent.
        result = OPPONENT[me] if OPPONENT[me] in owners else (me if me in owners else None)
        self.state = self._next(new_board, external, result, isinstance(move, Place))

    def _next(
        self,
        board: tuple[tuple[Piece, ...], ...],
        external: tuple[tuple[int, ...], ...],
        result: str | None,
        entered: bool,
    ) -> Position:
        """The position handed to the other player, with the repetition rule applied.

        ``entered``: a new piece came into play, so no earlier position can come back."""
        nxt = Position(board, external, OPPONENT[self.state.to_move], result)
        seen = (nxt.key,) if entered else (*self.state.seen, nxt.key)
        if result is None and seen.count(nxt.key) >= self.layout.repetitions:
            result = DRAW
        return replace(nxt, result=result, seen=seen)

    def changes_after(self, move: Move) -> dict[str, Content]:
        """Squares a legal ``move`` changes: the new top of each (the state is kept)."""
        if isinstance(move, Place):
            return {move.target: Piece(self.state.to_move, move.size)}
        assert isinstance(move, Shift)
        return {move.source: self._under(move.source), move.target: self._top(move.source)}

    def random_move(self, rng: random.Random) -> Move | Event:
        """A uniformly random legal move, or a ``pass`` when the player to move has none."""
        if self.state.result is not None:
            raise RefereeError("the game is over")
        moves = list(self.legal_moves())
        return rng.choice(moves) if moves else Event("pass", self.state.to_move)

    # ----------------------------------------------------------------- events
    def _check_event(self, event: Event) -> Verdict | None:
        if event.name == "pass":
            if next(self.legal_moves(), None) is not None:
                return Verdict.illegal(f"{self.state.to_move} can move, so may not pass")
            return None
        if event.name == "resign":
            if event.player is not None and event.player not in PLAYERS:
                return Verdict.illegal(f"unknown player {shown(event.player)}")
            return None
        if event.name == "end":
            return None
        return super()._check_event(event)

    def _apply_event(self, event: Event) -> None:
        p = self.state
        if event.name == "pass":
            self.state = self._next(p.board, p.external, None, entered=False)
        elif event.name == "resign":
            self.state = replace(p, result=OPPONENT[event.player or p.to_move])
        elif p.result is None:  # "end": a draw by agreement; after a win it only confirms
            self.state = replace(p, result=DRAW)

    # ----------------------------------------------------------------- inference
    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        """One changed square is a new piece, two are a lift-and-place; anything else is not
        one move. Legality is then judged by :meth:`check`."""
        if len(changes) == 1:
            ((square, (_, seen)),) = changes.items()
            return self._explain_new_piece(square, seen)
        if len(changes) == 2:
            return self._explain_lift(changes)
        names = sorted(changes)
        return Verdict.ambiguous(
            f"{len(names)} squares changed ({', '.join(names)}): one move changes one square "
            "(a new piece) or two (a piece moved)",
            *names,
        )

    def _explain_new_piece(self, square: str, seen: Content) -> Verdict:
        top, under = self._top(square), self._under(square)
        if seen == under:
            return Verdict.ambiguous(
                f"{square}: {describe(top)} was lifted and not put down; a touched piece "
                "must be played",
                square,
            )
        if seen is None:
            return Verdict.ambiguous(
                f"{square}: pieces vanished; played pieces never leave the board", square
            )
        if not isinstance(seen, Piece) or seen.color not in PLAYERS:
            return Verdict.ambiguous(f"{square}: not a gobblet piece: {shown(seen)}", square)
        if seen.color != self.state.to_move:
            return Verdict.illegal(f"it is {self.state.to_move}'s turn", square)
        move = Place(seen.size, square)
        return self.check(move) or Verdict(MOVE, move=move)

    def _explain_lift(self, changes: Changes) -> Verdict:
        # (source, target) pairs where the piece that left one square shows on the other.
        fits = [
            (src, dst)
            for src, dst in permutations(changes)
            if changes[src][0] is not None and changes[dst][1] == changes[src][0]
        ]
        # Pieces nest strictly by size, so at most one pair also uncovers the right piece.
        exact = [(src, dst) for src, dst in fits if changes[src][1] == self._under(src)]
        if exact:
            move = Shift(*exact[0])
            return self.check(move) or Verdict(MOVE, move=move)
        if len(fits) == 1:
            src = fits[0][0]
            return Verdict.ambiguous(
                f"{src}: lifting {describe(self._top(src))} should uncover "
                f"{describe(self._under(src))}, but the camera sees {describe(changes[src][1])}",
                src,
            )
        a, b = sorted(changes)
        return Verdict.ambiguous(
            f"{a} and {b} both changed, but not as one piece moving from one to the other", a, b
        )
