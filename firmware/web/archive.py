"""The finished games the page lists: the records in the records folders, read once each.

A game's id is its file's stem (``20261124-201500-gobblet``); ids are checked against a strict
pattern and the file must lie directly in one of the folders, so no request reaches another file.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine import Game, RefereeError

from ..records import load_game, log

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,80}(?:\.[A-Za-z0-9_-]{1,20})?")
#: The most records listed (newest first) and kept read in memory.
LISTED = 100


class Archive:
    """Reads ``FOLDER/*.json`` records; a small cache keyed by file size and time."""

    def __init__(self, directories: Sequence[str | Path]) -> None:
        self.directories = [Path(d) for d in directories]
        self._cache: OrderedDict[str, tuple[tuple[int, int], Game]] = OrderedDict()

    def path(self, game_id: str) -> Path | None:
        """The record file of ``game_id``, or ``None`` if the id is not one of this folder."""
        if not ID.fullmatch(game_id):
            return None
        for directory in self.directories:
            path = directory / f"{game_id}.json"
            try:
                if path.resolve().parent == directory.resolve() and path.is_file():
                    return path
            except OSError:
                continue
        return None

    def game(self, game_id: str) -> Game | None:
        """The game of ``game_id`` (``None``: no such record, or not a readable one)."""
        path = self.path(game_id)
        if path is None:
            return None
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = (stat.st_size, stat.st_mtime_ns)
        cached = self._cache.get(game_id)
        if cached is not None and cached[0] == stamp:
            self._cache.move_to_end(game_id)
            return cached[1]
        try:
            game = load_game(path)
        except RefereeError:
            return None
        self._cache[game_id] = (stamp, game)
        while len(self._cache) > LISTED:
            self._cache.popitem(last=False)
        return game

    def listing(self) -> list[dict[str, Any]]:
        """The newest :data:`LISTED` finished games: id, game, scores, winner, actions."""
        files = []
        for directory in self.directories:
            try:
                files += [p for p in directory.glob("*.json") if p.is_file()]
            except OSError:
                continue
        files.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        out = []
        for path in files[:LISTED]:
            game = self.game(path.stem)
            if game is None:
                continue
            out.append(_summary(path.stem, game))
        return out

    def details(self, game_id: str) -> dict[str, Any] | None:
        """One game for the page's replay: its listing entry and its move log."""
        game = self.game(game_id)
        if game is None:
            return None
        return {**_summary(game_id, game), "log": [entry.to_json() for entry in log(game)]}


def _summary(game_id: str, game: Game) -> dict[str, Any]:
    """A finished game's entry in the listing: id, game, players, scores, winner, actions."""
    return {
        "id": game_id,
        "game": game.name,
        "players": list(game.players),
        "scores": game.scores,
        "winner": game.winner,
        "over": game.is_over,
        "actions": len(game.history),
    }
