"""Blokus Duo records in Pentobi's SGF dialect (``libpentobi_base/Pentobi-SGF.md``), and back.

Pentobi writes ``GM[Blokus Duo]``; ``B`` is the first colour, ``W`` the second; a move is the
piece's squares, ``a1`` bottom left, in the order a1, b1, ..., a2, b2, ..., joined by commas
(``B[f9,e10,f10,g10,f11]``). The engine's square names are the same. Pentobi gives each colour
its own start point (the first colour e10, the second j5) while the printed rules let either
player take either; a game whose first player started on j5 is written turned by 180 degrees (a
symmetry of the board, so every move stays legal and every score the same) and the root's ``GC``
says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine import Event, FormatError, Game, RefereeError, new_game
from engine.grid import parse_square, square_name

GAME_NAME = "blokus-duo"
GM = "Blokus Duo"
COLOURS = ("B", "W")
TURNED = "turned 180 degrees: the first player started on j5, Pentobi's start for the second"


@dataclass
class Sgf:
    """The main line of an SGF file: the root's properties and the moves as (colour, squares)."""

    root: dict[str, list[str]] = field(default_factory=dict)
    moves: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


# --------------------------------------------------------------------------- writing
def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _order(square: str) -> tuple[int, int]:
    col, row = parse_square(square)
    return row, col


def _turn(square: str, size: int) -> str:
    col, row = parse_square(square)
    return square_name(size - 1 - col, size - 1 - row)


def to_sgf(game: Game) -> str:
    """The game as Pentobi's SGF (Blokus Duo only; :class:`FormatError` for any other game)."""
    if game.name != GAME_NAME:
        raise FormatError(
            f"SGF is Pentobi's dialect for Blokus Duo; {game.name} has none: use txt or jsonl"
        )
    size = game.edition.size  # type: ignore[attr-defined]
    first, second = game.players
    turned = _first_start(game) == "j5"
    root = [f"FF[4]CA[UTF-8]AP[tabletop-referee]GM[{GM}]PB[{first}]PW[{second}]"]
    if turned:
        root.append(f"GC[{_escape(TURNED)}]")
    if game.is_over and game.winner is not None:
        root.append(f"RE[{_result(game)}]")
    nodes = [";" + "".join(root)]
    fresh = type(game)(**game.options)
    for action in game.history:
        if isinstance(action, Event):
            fresh.handle(action)
            continue
        player = fresh.to_move
        squares = [_turn(s, size) if turned else s for s in action.cells()]
        colour = COLOURS[game.players.index(player)]  # type: ignore[arg-type]
        nodes.append(f";{colour}[{','.join(sorted(squares, key=_order))}]")
        fresh.play(action)
    return "(" + "\n".join(nodes) + ")\n"


def _first_start(game: Game) -> str | None:
    """The start point the first player's first piece covers (``None`` before it is placed)."""
    replay = type(game)(**game.options)
    for action in game.history:
        if isinstance(action, Event):
            replay.handle(action)
            continue
        if replay.to_move == game.players[0]:
            return next((s for s in action.cells() if s in ("e10", "j5")), None)
        replay.play(action)
    return None


def _result(game: Game) -> str:
    scores = game.scores
    first, second = (scores[p] for p in game.players)
    if game.winner == "draw":
        return "0"
    if game.state.resigned is not None:  # type: ignore[attr-defined]
        return f"{COLOURS[game.players.index(game.winner)]}+R"
    return f"{COLOURS[game.players.index(game.winner)]}+{abs(first - second)}"


# --------------------------------------------------------------------------- reading
def parse(text: str) -> Sgf:
    """The main line (first variation at every branch) of an SGF file."""
    out = Sgf()
    i, n, node, depth = 0, len(text), -1, 0
    while i < n:
        char = text[i]
        if char == "(":
            depth += 1
            i += 1
        elif char == ")":
            depth -= 1
            if depth >= 1:  # the first variation ended: the main line is complete
                break
            i += 1
        elif char == ";":
            node += 1
            i += 1
        elif char.isspace():
            i += 1
        elif char.isalpha():
            start = i
            while i < n and text[i].isalpha():
                i += 1
            name = text[start:i]
            values = []
            while True:
                while i < n and text[i].isspace():
                    i += 1
                if i >= n or text[i] != "[":
                    break
                value, i = _value(text, i + 1)
                values.append(value)
            if not values:
                raise FormatError(f"SGF property {name} has no value")
            if node < 0:
                raise FormatError("SGF property before the first node")
            if node == 0:
                out.root[name] = values
            elif name in COLOURS:
                out.moves.append((name, tuple(values[0].split(","))))
        else:
            raise FormatError(f"unexpected {char!r} at offset {i} of the SGF")
    if node < 0:
        raise FormatError("no SGF game tree: expected '(;'")
    return out


def _value(text: str, i: int) -> tuple[str, int]:
    chars = []
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            chars.append(text[i + 1])
            i += 2
        elif text[i] == "]":
            return "".join(chars), i + 1
        else:
            chars.append(text[i])
            i += 1
    raise FormatError("SGF value not closed by ']'")


def from_sgf(text: str) -> Game:
    """A Blokus Duo game from Pentobi SGF; every move is checked by the engine's rules."""
    sgf = parse(text)
    if sgf.root.get("GM") != [GM]:
        raise FormatError(f"not a Blokus Duo SGF (GM is {sgf.root.get('GM')!r})")
    names = [sgf.root.get(p, [""])[0] for p in ("PB", "PW")]
    order = names if sorted(names) == ["orange", "violet"] else ["orange", "violet"]
    game = new_game(GAME_NAME, players=order)
    edition = game.edition  # type: ignore[attr-defined]
    for number, (colour, squares) in enumerate(sgf.moves, 1):
        mask = 0
        for square in squares:
            if square.lower() not in edition.bit:
                raise FormatError(f"SGF move {number}: {square!r} is not a Blokus Duo square")
            mask |= 1 << edition.bit[square.lower()]
        move = edition.by_mask.get(mask)
        if move is None:
            raise FormatError(f"SGF move {number}: {','.join(squares)} is no Blokus Duo piece")
        player = order[COLOURS.index(colour)]
        if player != game.to_move:
            raise FormatError(f"SGF move {number}: {player} played but {game.to_move} was to move")
        try:
            game.play(move)
        except RefereeError as exc:
            raise FormatError(f"SGF move {number} ({move}): {exc}") from None
    return game
