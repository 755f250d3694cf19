"""``referee export`` and ``referee diagram``: a game record as other programs read it, and a
picture of any of its positions.

Formats: ``sgf`` (Pentobi's Blokus Duo dialect, :mod:`firmware.sgf`), ``txt`` (a numbered move
list with each score change) and ``jsonl`` (the observations and events ``referee replay``
judges, :func:`firmware.journal.replay_items`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine import FormatError, Game, Move, RefereeError

from .journal import replay_items, write_atomically
from .records import load_game, log, replayed
from .sgf import to_sgf

FORMATS = ("sgf", "txt", "jsonl")
#: File name extension and MIME type of each format (the web page's downloads).
MEDIA = {
    "sgf": (".blksgf", "application/x-blokus-sgf"),
    "txt": (".txt", "text/plain; charset=utf-8"),
    "jsonl": (".jsonl", "application/jsonl"),
}


def to_text(game: Game) -> str:
    """A plain move list: a header, then one numbered line per move or event with the score
    change and the scores after it, then the result."""
    options = ", ".join(f"{k}={v}" for k, v in game.options.items()) or "default options"
    lines = [f"# {game.name} ({options}); players: {', '.join(game.players)}"]
    for entry in log(game):
        change = " ".join(f"{p}{d:+d}" for p, d in entry.score_change.items()) or "-"
        scores = " ".join(f"{p}={s}" for p, s in entry.scores.items())
        who = entry.player or "-"
        lines.append(f"{entry.number:3d}. {who:8s} {entry.action:24s} {change:12s} {scores}")
    scores = ", ".join(f"{p} {s}" for p, s in game.scores.items())
    state = f"winner {game.winner}" if game.is_over else f"not over, {game.to_move} to move"
    lines.append(f"# result: {scores}; {state}")
    return "\n".join(lines) + "\n"


def to_jsonl(game: Game) -> str:
    """The game as ``referee replay`` input (one JSON object a line)."""
    return "".join(json.dumps(item, separators=(",", ":")) + "\n" for item in replay_items(game))


def export(game: Game, fmt: str) -> str:
    """``game`` in format ``fmt`` (one of :data:`FORMATS`); :class:`FormatError` if it has none."""
    if fmt == "sgf":
        return to_sgf(game)
    if fmt == "txt":
        return to_text(game)
    if fmt == "jsonl":
        return to_jsonl(game)
    raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def cmd_export(args: argparse.Namespace) -> int:
    """Entry point of ``referee export``."""
    try:
        text = export(load_game(args.record), args.format)
    except RefereeError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        write_atomically(Path(args.out), text.encode("utf-8"))
    except OSError as exc:
        print(f"referee: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def cmd_diagram(args: argparse.Namespace) -> int:
    """Entry point of ``referee diagram``."""
    from .diagram import draw

    out = Path(args.out)
    if out.suffix.lower() not in (".svg", ".png"):
        print(f"referee: --out must end in .svg or .png, not {out.name!r}", file=sys.stderr)
        return 2
    try:
        game = load_game(args.record)
    except RefereeError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    total = len(game.history)
    move = total if args.move is None else args.move
    if not 0 <= move <= total:
        print(f"referee: --move must be 0..{total}, the record's actions", file=sys.stderr)
        return 2
    position = replayed(game, move)
    action = game.history[move - 1] if move else None
    drawing = draw(position, last=action.cells() if isinstance(action, Move) else ())
    try:
        if out.suffix.lower() == ".svg":
            write_atomically(out, drawing.to_svg().encode("utf-8"))
        else:
            drawing.to_png().save(out)
    except OSError as exc:
        print(f"referee: cannot write {out}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"referee: {game.name} after {move} of {total} actions -> {out}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``export`` and ``diagram`` to the ``referee`` command line."""
    p = sub.add_parser("export", help="a game record as SGF (Blokus Duo), a move list or JSONL")
    p.add_argument("record", help="a game record (.json) or journal (.jsonl)")
    p.add_argument("--format", required=True, choices=FORMATS)
    p.add_argument("--out", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("diagram", help="a picture of a position of a game record")
    p.add_argument("record", help="a game record (.json) or journal (.jsonl)")
    p.add_argument("--move", type=int, help="after this many actions (default: all)")
    p.add_argument("--out", required=True, help="FILE.svg or FILE.png")
    p.set_defaults(func=cmd_diagram)
