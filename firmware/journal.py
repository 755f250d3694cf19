"""The running game's journal, so that a killed referee resumes the same game, and game records.

The journal is a JSON Lines file. Its first line names the game and its options::

    {"journal": "tabletop-referee", "version": 1, "game": "gobblet", "options": {},
     "started": "20261125-203000"}

then one line per accepted move (``{"move": NOTATION, "player": WHO}``; the player decides who
started when the rules leave it to the first piece) or event (the event's own JSON, as in
``shared/spec/observation.md``: ``{"event": "pass"}``, ``{"event": "start", "players": 3}``).
Each line goes to disk with a single write, a flush and an ``os.fsync`` before
:meth:`Journal.record` returns, so every move the players were shown survives a power cut.
:meth:`Journal.resume` replays the file into a fresh :class:`~engine.referee.Referee`; a line that
cannot be read (the last one cut short by the power cut) or replayed is reported and skipped.

A finished game is saved by :func:`save_record` as its record (``Game.to_record()``) and as a
JSON Lines stream of observations and events that ``referee replay`` judges again.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from engine import EVENT, MOVE, Event, FormatError, Game, Outcome, Referee, RefereeError
from engine.referee import START_OPTIONS

FORMAT = "tabletop-referee"
VERSION = 1
#: The journal's file name in the ``[journal] directory``.
CURRENT = "current.jsonl"
#: ``time.strftime`` format of a journal's ``started`` time.
STARTED = "%Y%m%d-%H%M%S"


class JournalError(RuntimeError):
    """The journal cannot be used at all (no file, or no readable header)."""


@dataclass(frozen=True)
class Problem:
    """A journal line that was skipped, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Resumed:
    """What :meth:`Journal.resume` rebuilt: the referee, how many lines it replayed, problems."""

    referee: Referee
    entries: int
    problems: tuple[Problem, ...]
    started: str


@dataclass(frozen=True)
class SavedGame:
    """The files :func:`save_record` wrote."""

    record: Path
    replay: Path


def entry(outcome: Outcome) -> dict[str, Any] | None:
    """The journal line of an outcome: its accepted move or event, ``None`` for anything else."""
    verdict = outcome.verdict
    if verdict.kind == MOVE and verdict.move is not None:
        return {"move": str(verdict.move), "player": outcome.mover}
    if verdict.kind == EVENT and verdict.event is not None:
        return verdict.event.to_json()
    return None


class Journal:
    """An append-only journal file; :meth:`create` starts one, :meth:`resume` reads one back.

    ``started`` is the local time the game began (``YYYYmmdd-HHMMSS``), read from the header by
    :meth:`resume`; it names the game's record."""

    def __init__(self, path: str | Path, started: str | None = None) -> None:
        self.path = Path(path)
        self.started = started or time.strftime(STARTED)
        self._file: BinaryIO | None = None

    @classmethod
    def create(cls, path: str | Path, game: str, options: Mapping[str, Any]) -> Journal:
        """Start a journal for a new game (atomically replacing any previous one)."""
        journal = cls(path)
        header = {
            "journal": FORMAT,
            "version": VERSION,
            "game": game,
            "options": dict(options),
            "started": journal.started,
        }
        journal.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(journal.path, _line(header))
        return journal

    def record(self, outcome: Outcome) -> bool:
        """Append the outcome's accepted move or event, durably; False if there is none."""
        line = entry(outcome)
        if line is None:
            return False
        self.append(line)
        return True

    def append(self, item: Mapping[str, Any]) -> None:
        """Append one JSON object as a line and wait until it is on disk."""
        handle = self._open()
        handle.write(_line(item))
        handle.flush()
        os.fsync(handle.fileno())

    def resume(self) -> Resumed:
        """Replay the journal into a new referee; unreadable or refused lines are skipped."""
        try:
            lines = self.path.read_bytes().split(b"\n")
        except OSError as exc:
            raise JournalError(f"cannot read journal {self.path}: {exc.strerror}") from None
        referee, started = self._referee(lines[0])
        self.started = started
        problems: list[Problem] = []
        entries = 0
        for number, raw in enumerate(lines[1:], 2):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                problems.append(Problem(number, "unreadable, cut short by a crash? skipped"))
                continue
            reason = _replay(referee, item)
            if reason:
                problems.append(Problem(number, f"{reason}; skipped"))
            else:
                entries += 1
        return Resumed(referee, entries, tuple(problems), started)

    def close(self) -> None:
        """Close the file (appending reopens it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> BinaryIO:
        if self._file is None:
            try:
                size = self.path.stat().st_size
                handle = self.path.open("ab")
            except FileNotFoundError:
                raise JournalError(f"no journal at {self.path}: Journal.create() one") from None
            if size and _last_byte(self.path) != b"\n":
                handle.write(b"\n")  # a line cut short by a crash stays a line of its own
            self._file = handle
        return self._file

    def _referee(self, raw: bytes) -> tuple[Referee, str]:
        try:
            header = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            header = None
        if not (
            isinstance(header, dict)
            and header.get("journal") == FORMAT
            and isinstance(header.get("game"), str)
            and isinstance(header.get("options", {}), dict)
        ):
            raise JournalError(f"{self.path} has no journal header naming the game")
        started = header.get("started")
        if not isinstance(started, str):  # a journal older than the field: its file's time
            started = time.strftime(STARTED, time.localtime(self.path.stat().st_mtime))
        try:
            return Referee(header["game"], **header.get("options", {})), started
        except (RefereeError, TypeError) as exc:
            raise JournalError(f"{self.path}: cannot start {header['game']}: {exc}") from None


def _replay(referee: Referee, item: Any) -> str:
    """Apply one journal line to ``referee``; the reason it cannot be applied, else ``""``."""
    if not isinstance(item, dict):
        return "not a JSON object"
    if "move" in item:
        game = referee.game
        try:
            player = item.get("player")
            if player is not None and game.first_is_open:
                game.open_with(str(player))  # the first piece decided who starts
            game.play(game.parse_move(str(item["move"])))
        except RefereeError as exc:
            return f"move {item['move']!r} cannot be replayed: {exc}"
        return ""
    if "event" in item:
        outcome = referee.feed(item)
        if outcome.verdict.kind != EVENT:
            return f"event {item['event']!r} refused: {outcome.verdict.reason}"
        return ""
    return "neither a move nor an event"


def replay_items(game: Game) -> list[dict[str, Any]]:
    """``game`` as ``referee replay`` input: a ``start`` event with the game's options, then the
    board after each move (``observation_to_json`` of ``current_observation``) and each event.

    Options other than ``players``, ``teams``, ``first`` and ``scoring`` cannot be told by a
    ``start`` event; the record keeps them."""
    start = {k: game.options[k] for k in START_OPTIONS if k in game.options}
    items: list[dict[str, Any]] = [{"event": "start", **start}]
    fresh = type(game)(**game.options)
    for action in game.history:
        if isinstance(action, Event):
            fresh.handle(action)
            items.append(action.to_json())
        else:
            fresh.play(action)
            items.append(fresh.observation_to_json(fresh.current_observation()))
    return items


def save_record(
    game: Game, directory: str | Path, stem: str | None = None, *, replace: bool = False
) -> SavedGame:
    """Save a finished game in ``directory`` as ``STEM.json`` (its record) and ``STEM.jsonl``
    (:func:`replay_items`); ``stem`` defaults to the local time and the game's name. An existing
    ``STEM`` is kept (the new files get a ``-2``, ``-3``... suffix) unless ``replace``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    base = stem or f"{time.strftime('%Y%m%d-%H%M%S')}-{game.name}"
    for n in itertools.count(1):
        name = base if n == 1 else f"{base}-{n}"
        if replace or not (directory / f"{name}.json").exists():
            break
    saved = SavedGame(directory / f"{name}.json", directory / f"{name}.jsonl")
    try:
        write_atomically(saved.replay, b"".join(_line(item) for item in replay_items(game)))
    except RefereeError as exc:
        raise FormatError(f"the game cannot be replayed from its record: {exc}") from None
    write_atomically(saved.record, json.dumps(game.to_record(), indent=1).encode() + b"\n")
    return saved


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` all at once: a temporary file, fsync'ed, then renamed. On an
    error (a full disk) the temporary file is removed and ``path`` is left as it was."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # make the rename itself durable
    finally:
        os.close(directory)


def _line(item: Mapping[str, Any]) -> bytes:
    return json.dumps(item, separators=(",", ":")).encode() + b"\n"


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)
