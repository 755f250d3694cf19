"""Spectrangle: triangular pieces whose edge colours must match the pieces they touch.

The rules as implemented (rulebook ``shared/rules/spectrangle.fr.txt``, the facts it leaves out
in ``shared/rules/README.md``). The board size, the pieces and their values, the bonus cells and
the hand size live in ``engine/data/spectrangle.json``.

* 2 to 4 players ``p1``..``pN`` play in turn; four may play as two teams of partners sitting
  opposite (``p1+p3`` against ``p2+p4``) who share one score.
* The first piece goes anywhere but on a bonus cell. Every later piece touches at least one piece
  and every edge it shares matches the colour on the other side; white matches any colour.
  Pieces may be turned and flipped; a placed piece never moves.
* A placement scores the piece's value x the sides it touches (at least 1) x the cell's bonus.
* A player who cannot place passes, or exchanges a piece with the bag while it holds any.
* The game ends when every piece is placed, when no unplaced piece fits anywhere, or when the bag
  is empty and every player passed in a row. The ``end`` event (which may also stop the game at
  any time) deducts the values of the pieces left in hand. The highest score wins.

The camera cannot see the hands, so the referee knows the bag only by counting:
``bag = max(0, pieces - hand * players - pieces placed)``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from itertools import permutations
from typing import Any

from . import data
from .core import (
    DRAW,
    MOVE,
    Changes,
    Event,
    FormatError,
    Game,
    IllegalMoveError,
    Move,
    Observation,
    RefereeError,
    Verdict,
    shown,
)

Edges = tuple[str, str, str]
"""A cell's content: the colour letters of its left, right and base edges (``("R", "G", "Y")``)."""

#: Colour letters of piece codes and move notation -> colour names of the observation JSON.
COLOURS = {"R": "red", "G": "green", "B": "blue", "Y": "yellow", "P": "purple", "W": "white"}
LETTERS = {name: letter for letter, name in COLOURS.items()}
#: The joker's colour: it matches any colour.
WHITE = "W"
#: The sides of a cell, in the order of :data:`Edges`.
SIDES = ("left", "right", "base")
LEFT, RIGHT, BASE = range(3)
OPTIONS = ("players", "teams", "first", "data")
#: Partners sit opposite: the two teams of a four-player game.
TEAMS = (("p1", "p3"), ("p2", "p4"))

NOTATION = re.compile(r"([RGBYPW]{3})@(\d+)")

Neighbours = tuple[tuple[tuple[int, int, int], ...], ...]


@dataclass(frozen=True)
class Place(Move):
    """Put a piece on ``cell`` showing ``edges`` (left, right, base). Notation ``RGY@17``."""

    edges: Edges
    cell: int

    def __str__(self) -> str:
        return f"{''.join(self.edges)}@{self.cell}"

    def cells(self) -> tuple[str, ...]:
        """The one cell the piece goes on."""
        return (str(self.cell),)


# --------------------------------------------------------------------------- the equipment
def triangle(rows: int) -> Neighbours:
    """Per cell of a board of ``rows`` rows: its edges shared with another cell, as
    (side, neighbour, neighbour's side). Cell ``row**2 + k`` points up for even ``k``."""
    out = []
    for row in range(rows):
        for k in range(2 * row + 1):
            cell = row * row + k
            shared = []
            if k > 0:
                shared.append((LEFT, cell - 1, RIGHT))
            if k < 2 * row:
                shared.append((RIGHT, cell + 1, LEFT))
            if k % 2 == 1:
                shared.append((BASE, (row - 1) ** 2 + k - 1, BASE))
            elif row + 1 < rows:
                shared.append((BASE, (row + 1) ** 2 + k + 1, BASE))
            out.append(tuple(shared))
    return tuple(out)


class Box:
    """What is in the box: the board, the pieces with their values, the bonus cells, the hand.

    A piece is the multiset of its three colours; ``piece_of`` maps every way of laying every
    piece on a cell (each distinct order of its colours) to the piece's code.
    """

    def __init__(self, raw: Mapping[str, Any]) -> None:
        try:
            self.neighbours = triangle(int(raw["rows"]))
            self.hand = int(raw["hand"])
            self.values = {str(code): int(value) for code, value in raw["pieces"].items()}
            self.bonus = {int(cell): int(times) for cell, times in raw["bonus"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FormatError(f"spectrangle data: missing or bad entry ({exc})") from None
        self._by_letters: dict[str, str] = {}
        self.piece_of: dict[Edges, str] = {}
        for code in self.values:
            if len(code) != 3 or not set(code) <= set(COLOURS):
                raise FormatError(f"spectrangle data: bad piece code {shown(code)}")
            if "".join(sorted(code)) in self._by_letters:
                raise FormatError(f"spectrangle data: two pieces have the colours of {code}")
            self._by_letters["".join(sorted(code))] = code
            for edges in dict.fromkeys(permutations(code)):
                self.piece_of[edges] = code  # type: ignore[index]
        if not all(0 <= cell < self.size for cell in self.bonus):
            raise FormatError("spectrangle data: a bonus cell is off the board")
        self._fits: dict[tuple[str | None, ...], tuple[Edges, ...]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> Box:
        return self  # read-only equipment, shared by every copy of a game

    @property
    def size(self) -> int:
        """Number of cells."""
        return len(self.neighbours)

    def code(self, letters: str) -> str | None:
        """The code of the piece made of ``letters`` in any order, or ``None``."""
        return self._by_letters.get("".join(sorted(letters.upper())))

    def fitting(self, need: tuple[str | None, ...]) -> tuple[Edges, ...]:
        """Every way of laying any piece on a cell whose sides must show ``need`` (``None``:
        any colour); a white edge matches anything. Memoised: there are few distinct needs."""
        found = self._fits.get(need)
        if found is None:
            found = tuple(
                edges
                for edges in self.piece_of
                if all(n is None or c in (n, WHITE) for c, n in zip(edges, need, strict=True))
            )
            self._fits[need] = found
        return found


@cache
def load_box(path: str | None = None) -> Box:
    """The equipment of ``engine/data/spectrangle.json`` (or of the file at ``path``)."""
    try:
        raw = data.load("spectrangle", path)
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read spectrangle data {path}: {exc}") from None
    return Box(raw)


def sides_of(players: tuple[str, ...], teams: Any) -> tuple[tuple[str, ...], dict[str, int]]:
    """Who scores together: (side names, player -> side index). Partners sit opposite."""
    if teams is False:
        return players, {p: i for i, p in enumerate(players)}
    if len(players) != 4:
        raise FormatError(f"teams need 4 players, not {len(players)}")
    if teams is not True:
        given = {
            frozenset(team)
            for team in teams
            if isinstance(team, list | tuple) and all(isinstance(p, str) for p in team)
        }
        if len(teams) != 2 or given != {frozenset(team) for team in TEAMS}:
            raise FormatError(
                f"teams are p1+p3 and p2+p4 (partners sit opposite), not {shown(teams)}"
            )
    return tuple("+".join(team) for team in TEAMS), {p: i for i, t in enumerate(TEAMS) for p in t}


# --------------------------------------------------------------------------- the state
@dataclass
class _State:
    """Everything that changes during a game (copied on every move for undo)."""

    board: list[Edges | None]
    placed: dict[str, int]  # piece code -> its cell
    scores: list[int]  # per side (player or team)
    turn: int  # index of the player to move
    passes: int = 0  # passes and exchanges in a row
    over: str = ""  # why the game ended ("" while it goes on)
    resigned: str | None = None
    ended: bool = False  # the hands were deducted (``end`` event)

    def __deepcopy__(self, memo: dict[int, Any]) -> _State:
        return replace(
            self, board=list(self.board), placed=dict(self.placed), scores=list(self.scores)
        )


# --------------------------------------------------------------------------- the game
class Spectrangle(Game):
    """A game of Spectrangle. Options: ``players`` (2-4), ``teams`` (4 players), ``first``
    (player name, default ``p1``), ``data`` (path of another equipment file)."""

    name = "spectrangle"
    description = "triangular pieces, match the edge colours (2-4 players, teams of 2)"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        given = {k: v for k, v in options.items() if v is not None}
        for key in given:
            if key not in OPTIONS:
                raise FormatError(f"spectrangle has no {shown(key)} option")
        self.box = load_box(given.get("data"))
        teams = given.get("teams", False)
        count = given.get("players", 4 if teams else 2)
        if isinstance(count, bool) or not isinstance(count, int) or not 2 <= count <= 4:
            raise FormatError(f"spectrangle is for 2 to 4 players, not {shown(count)}")
        if not isinstance(teams, bool | list | tuple):
            raise FormatError(f"teams must be true or two lists of players, not {shown(teams)}")
        self._players = tuple(f"p{i}" for i in range(1, count + 1))
        self._sides, self._side_of = sides_of(self._players, teams)
        first = given.get("first", self._players[0])
        if first not in self._players:
            raise FormatError(f"first player must be one of {', '.join(self._players)}")
        self._names = tuple(str(cell) for cell in range(self.box.size))
        self.state = _State(
            board=[None] * self.box.size,
            placed={},
            scores=[0] * len(self._sides),
            turn=self._players.index(first),
        )

    # ----------------------------------------------------------------- who and how much
    @property
    def players(self) -> tuple[str, ...]:
        """``p1``..``pN`` in turn order."""
        return self._players

    @property
    def to_move(self) -> str | None:
        """The player whose turn it is (``None`` once the game is over)."""
        return None if self.state.over else self._players[self.state.turn]

    @property
    def scores(self) -> dict[str, int]:
        """Every player's score (partners both show their team's shared score)."""
        return {p: self.state.scores[self._side_of[p]] for p in self._players}

    @property
    def is_over(self) -> bool:
        """True once the game has ended (see :attr:`over_reason`)."""
        return bool(self.state.over)

    @property
    def over_reason(self) -> str:
        """Why the game ended ("" while it goes on)."""
        return self.state.over

    @property
    def winner(self) -> str | None:
        """The player (or team ``p1+p3``/``p2+p4``) with the highest score, or :data:`DRAW`.
        After a resignation the best of the other sides wins."""
        if not self.state.over:
            return None
        contenders = range(len(self._sides))
        if self.state.resigned is not None:
            loser = self._side_of[self.state.resigned]
            contenders = [side for side in contenders if side != loser]
        best = max(self.state.scores[side] for side in contenders)
        top = [side for side in contenders if self.state.scores[side] == best]
        return self._sides[top[0]] if len(top) == 1 else DRAW

    @property
    def bag(self) -> int:
        """Pieces in the bag, counted from the board (the hands are on the table, unseen)."""
        hands = self.box.hand * len(self._players)
        return max(0, len(self.box.values) - hands - len(self.state.placed))

    # ----------------------------------------------------------------- board
    @property
    def cell_names(self) -> tuple[str, ...]:
        """``"0"``..``"35"``: row by row from the apex, left to right."""
        return self._names

    def view(self) -> dict[str, Edges | None]:
        """Cell name -> the edges of the piece on it (``None`` empty)."""
        return dict(zip(self._names, self.state.board, strict=True))

    def cell_from_json(self, value: Any) -> Edges | None:
        """``{"left": C, "right": C, "base": C}`` (or ``null``) -> edge colour letters."""
        if value is None:
            return None
        if not isinstance(value, Mapping) or set(value) != set(SIDES):
            raise FormatError(
                f'a piece is {{"left": C, "right": C, "base": C}}, not {shown(value)}'
            )
        try:
            return tuple(LETTERS[value[side]] for side in SIDES)  # type: ignore[return-value]
        except (KeyError, TypeError):
            names = " ".join(COLOURS.values())
            raise FormatError(f"edge colours are {names}, not {shown(value)}") from None

    def cell_to_json(self, content: Edges | None) -> dict[str, str] | None:
        """Edge colour letters -> ``{"left": C, "right": C, "base": C}``."""
        if content is None:
            return None
        return {side: COLOURS[c] for side, c in zip(SIDES, content, strict=True)}

    # ----------------------------------------------------------------- moves
    def parse_move(self, text: str) -> Place:
        """``RGY@17``: the left, right and base edge colours, then the cell."""
        found = NOTATION.fullmatch(text.strip().upper())
        if found is None:
            raise FormatError(f"not a Spectrangle move: {shown(text)} (expected e.g. RGY@17)")
        cell = int(found[2])
        if cell >= self.box.size:
            raise FormatError(f"there is no cell {cell}")
        return Place(tuple(found[1]), cell)  # type: ignore[arg-type]

    def legal_moves(self) -> Iterator[Place]:
        """Every placement of every unplaced piece, in every orientation, that the rules allow."""
        if self.state.over:
            return
        for cell, edges in self._placements(self._unplaced()):
            yield Place(edges, cell)

    def check(self, move: Move) -> Verdict | None:
        """``None`` when ``move`` may be played now, else the illegal verdict saying why."""
        if not isinstance(move, Place):
            return Verdict.illegal(f"{move} is not a Spectrangle move")
        cell = str(move.cell)
        if self.state.over:
            return Verdict.illegal("the game is over", cell)
        if not 0 <= move.cell < self.box.size:
            return Verdict.illegal(f"there is no cell {cell}")
        if self.state.board[move.cell] is not None:
            return Verdict.illegal(f"cell {cell} is taken", cell, move=move)
        problem = self._piece_problem(move)
        if problem is not None:
            return Verdict.illegal(*problem, move=move)
        return self._placement_problem(move)

    def _piece_problem(self, move: Place) -> tuple[str, ...] | None:
        """(reason, cells...) when the piece ``move`` shows does not exist or is already placed."""
        cell = str(move.cell)
        code = self.box.piece_of.get(move.edges)
        if code is None:
            colours = "/".join(COLOURS.get(c, c) for c in move.edges)
            return f"{cell}: there is no {colours} piece", cell
        where = self.state.placed.get(code)
        if where is not None:
            return f"{cell}: the piece {code} is already on the board at {where}", cell, str(where)
        return None

    def _placement_problem(self, move: Place) -> Verdict | None:
        """Where the piece may go: the first off the bonus cells, the others touching matching
        edges (white matches any colour)."""
        cell = str(move.cell)
        if not self.state.placed:
            if move.cell in self.box.bonus:
                reason = f"cell {cell} is a bonus cell: the first piece may not go there"
                return Verdict.illegal(reason, cell, move=move)
            return None
        touching = False
        clashes: list[str] = []
        cells = [cell]
        for side, other, their_side in self.box.neighbours[move.cell]:
            theirs = self.state.board[other]
            if theirs is None:
                continue
            touching = True
            mine, colour = move.edges[side], theirs[their_side]
            if mine != colour and WHITE not in (mine, colour):
                clashes.append(
                    f"edge {COLOURS[mine]}/{COLOURS[colour]} mismatch with the piece at {other}"
                )
                cells.append(str(other))
        if not touching:
            return Verdict.illegal(f"piece at {cell} touches no other piece", cell, move=move)
        if clashes:
            return Verdict.illegal("; ".join(clashes), *cells, move=move)
        return None

    def points(self, move: Place) -> int:
        """What a legal placement scores: value x sides touching (at least 1) x bonus."""
        board = self.state.board
        sides = sum(board[other] is not None for _, other, _ in self.box.neighbours[move.cell])
        value = self.box.values[self.box.piece_of[move.edges]]
        return value * max(1, sides) * self.box.bonus.get(move.cell, 1)

    def _apply(self, move: Move) -> None:
        assert isinstance(move, Place)
        state = self.state
        state.scores[self._side_of[self._players[state.turn]]] += self.points(move)
        state.board[move.cell] = move.edges
        state.placed[self.box.piece_of[move.edges]] = move.cell
        state.passes = 0
        state.turn = (state.turn + 1) % len(self._players)
        if len(state.placed) == len(self.box.values):
            state.over = "every piece is on the board"
        elif next(self._placements(self._unplaced()), None) is None:
            state.over = "no piece left fits anywhere"

    def changes_after(self, move: Move) -> dict[str, Edges]:
        """The one cell a legal placement fills (the vision decoder calls this a lot)."""
        problem = self.check(move)
        if problem is not None:
            raise IllegalMoveError(problem.reason, problem.cells)
        assert isinstance(move, Place)
        return {str(move.cell): move.edges}

    def _unplaced(self) -> list[str]:
        """Codes of the pieces not on the board (in a hand or in the bag), in data order."""
        return [code for code in self.box.values if code not in self.state.placed]

    def _placements(self, pieces: Collection[str]) -> Iterator[tuple[int, Edges]]:
        """Every legal (cell, edges) for the pieces with codes in ``pieces``."""
        board, piece_of = self.state.board, self.box.piece_of
        if not self.state.placed:
            for cell in range(self.box.size):
                if cell not in self.box.bonus:
                    yield from ((cell, e) for e, code in piece_of.items() if code in pieces)
            return
        for cell in range(self.box.size):
            if board[cell] is not None:
                continue
            need: list[str | None] = [None, None, None]
            touching = False
            for side, other, their_side in self.box.neighbours[cell]:
                theirs = board[other]
                if theirs is not None:
                    touching = True
                    if theirs[their_side] != WHITE:
                        need[side] = theirs[their_side]
            if touching:
                for edges in self.box.fitting(tuple(need)):
                    if piece_of[edges] in pieces:
                        yield cell, edges

    def random_move(self, rng: random.Random) -> Place | Event:
        """A random legal action: the player holds a random hand of unplaced pieces and places
        one of them at random; if none fits, they exchange (bag not empty) or pass."""
        if self.state.over:
            raise RefereeError("the game is over")
        unplaced = self._unplaced()
        hand = set(rng.sample(unplaced, min(self.box.hand, len(unplaced))))
        options = list(self._placements(hand))
        if options:
            cell, edges = rng.choice(options)
            return Place(edges, cell)
        return Event("exchange" if self.bag else "pass", self.to_move)

    # ----------------------------------------------------------------- events
    def _check_event(self, event: Event) -> Verdict | None:
        if event.name == "pass":
            return None
        if event.name == "exchange":
            return None if self.bag else Verdict.illegal("the bag is empty: nothing to exchange")
        if event.name == "resign":
            if event.player is not None and event.player not in self._players:
                return Verdict.illegal(f"unknown player {shown(event.player)}")
            return None
        if event.name == "end":
            if self.state.ended:
                return Verdict.illegal("the game has already ended")
            try:
                self._hands(event.data.get("remaining"))
            except FormatError as exc:
                return Verdict.illegal(f"end: {exc}")
            return None
        return super()._check_event(event)

    def _apply_event(self, event: Event) -> None:
        state = self.state
        if event.name in ("pass", "exchange"):
            state.passes += 1
            state.turn = (state.turn + 1) % len(self._players)
            if not self.bag and state.passes >= len(self._players):
                state.over = "the bag is empty and every player passed"
        elif event.name == "resign":
            state.resigned = event.player or self._players[state.turn]
            state.over = f"{state.resigned} resigned"
        elif event.name == "end":
            for player, codes in self._hands(event.data.get("remaining")).items():
                state.scores[self._side_of[player]] -= sum(self.box.values[c] for c in codes)
            state.ended = True
            state.over = state.over or "ended by the players"

    def _hands(self, remaining: Any) -> dict[str, list[str]]:
        """The ``end`` event's ``remaining`` (player -> piece codes still in hand), checked:
        real pieces, not on the board, none twice, at most a hand each."""
        if remaining is None:
            return {}
        if not isinstance(remaining, Mapping):
            raise FormatError("'remaining' must map players to lists of piece codes")
        holder: dict[str, str] = {}
        hands: dict[str, list[str]] = {}
        for player, codes in remaining.items():
            if player not in self._players:
                raise FormatError(f"unknown player {shown(player)}")
            if not isinstance(codes, list | tuple) or not all(isinstance(c, str) for c in codes):
                raise FormatError(f'{player}\'s pieces must be a list of codes like "RRY"')
            if len(codes) > self.box.hand:
                raise FormatError(
                    f"{player} lists {len(codes)} pieces; a hand holds {self.box.hand}"
                )
            hands[player] = []
            for text in codes:
                code = self.box.code(text)
                if code is None:
                    raise FormatError(f"{player} holds {shown(text)}: there is no such piece")
                if code in self.state.placed:
                    raise FormatError(
                        f"{player} holds {code}, which is on the board at {self.state.placed[code]}"
                    )
                if code in holder:
                    raise FormatError(f"{code} is listed twice ({holder[code]} and {player})")
                holder[code] = player
                hands[player].append(code)
        return hands

    # ----------------------------------------------------------------- inference
    def explain(self, changes: Changes, obs: Observation) -> Verdict:
        """One new piece on an empty cell is a placement, judged by :meth:`check`; anything
        else (a piece moved or removed, several placed, a piece that does not exist or is
        already on the board) is ambiguous."""
        touched = sorted((name for name, (was, _) in changes.items() if was is not None), key=int)
        if touched:
            what = ", ".join(
                f"{name} {'emptied' if changes[name][1] is None else 'changed'}" for name in touched
            )
            return Verdict.ambiguous(f"placed pieces never move, but {what}", *touched)
        if len(changes) > 1:
            cells = sorted(changes, key=int)
            return Verdict.ambiguous(
                f"{len(cells)} pieces placed at once ({', '.join(cells)}): one per turn", *cells
            )
        ((name, (_, edges)),) = changes.items()
        move = Place(edges, int(name))
        problem = self._piece_problem(move)
        if problem is not None:
            return Verdict.ambiguous(*problem)
        return self.check(move) or Verdict(MOVE, move=move)
