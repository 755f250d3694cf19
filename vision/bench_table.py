"""``referee bench table``: whole games at one table, the reader calibrated on every accepted board.

``bench vision`` reads single scenes, each with a fresh reader, as the labelled photos are read.
At a real table the referee starts from the empty board and accepts one move after another: the
reader then judges changes against the last accepted frame (:mod:`vision.change`) and learns
this table's pieces (:mod:`vision.adapt`). This benchmark plays ``tables`` random legal games
per game (:func:`vision.synth.random_game`, at most :data:`MOVES` moves), each filmed with one
camera, light and box of the split's domain, the board laid a few mm off its outline; every board
is read through the real path (tracked locator, the game's reader) and then accepted with its
truth, as the players would put a misread right. The ``traced`` split films its tables with the
path tracer (:mod:`vision.synth.traced`: the held-out domain's draws in physical light, the
board on its outline), at the vision bench's samples a pixel. The same frames are read twice:
by the reader as the model file sets it, and with its adaptation off (``*_without_adapt``).
(``referee bench night``, :mod:`firmware.bench_night`, runs the loop itself instead, with
players who only press what its screen asks.)

Per game: ``boards`` read, ``boards_right`` (every cell right, nothing flagged), ``changed_cells``
(cells whose content differs from the previous board) and ``changed_right`` (of them, read
right), ``flagged`` (clear boards reported ``occluded`` or ``partial``: a referee that waits).
And what the referee makes of each move, as the loop does (:func:`vision.decode.decode` with the
rules, then the engine's verdict): ``moves`` judged, ``moves_right`` (the move played),
``moves_wrong`` (another move accepted: a false verdict) and ``moves_refused`` (the rest: called
illegal, no change, unclear, to be confirmed or asked about as an illegal act, or its board
found occluded; the players then put it right); of the moves wrong or refused on a board not
found occluded, ``failed_misread_elsewhere`` those whose board was read with another content on
a cell the move leaves alone (a piece accepted before, or an empty cell beside the move, sent to
the model again and misread), and ``failed_misread_only_elsewhere`` those of them whose own
cells were read right. The loop judges no board found occluded: it waits until the players press OK
("OK if it is clear", :meth:`vision.pipeline.VisionPipeline.read_next_as_clear`), so
``flagged_moves`` counts the moves whose clear board was, and ``flagged_moves_right`` those of
them judged right once read as clear. Once a game (before a move drawn from its seed) a player
first puts a legal move's pieces on the wrong cells and takes them back
(:func:`engine.attempts.illegal_attempt`): ``illegal_placements`` such boards,
``illegal_flagged`` called illegal, ``illegal_let_stand`` taken for a move or for no change (the
referee let a placement the rules forbid stand); the rest were asked about or unclear. Those
boards are in no other figure, and nothing is learnt from them. ``--failures`` lists each move
accepted wrongly on stderr: its split, game, table and board (counted from 0, the opening, at that
table, an illegal placement's board included), the move played, the move accepted and the cells
read otherwise than the board showed them (cell: shown -> read, as the observation JSON has them),
and the classes the table's bank held examples of at that read, with how many (:mod:`vision.adapt`:
whether this table had shown the piece before).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from engine import ILLEGAL, MOVE, NO_CHANGE, Game, Move, Observation, Verdict, new_game
from engine.attempts import illegal_attempt
from engine.core import Content

from .adapt import Adaptation
from .bench import (
    TRACED_SPLITS,
    TRACED_SPP,
    bench_splits,
    board_errors,
    split_domain,
)
from .decode import decode
from .geometry import load_geometry
from .locate import BoardLocator, BoardNotFound, BoardPose
from .model import model_for
from .readers import reader_for
from .readers.fitted import FittedReader
from .synth import Domain, random_board_shift, random_game, render_scene, traced
from .synth.photo import film

#: Moves per sample game at most.
MOVES = 30


@dataclass
class Tally:
    """One reader's counts over a game's tables."""

    boards: int = 0
    right: int = 0
    changed: int = 0
    changed_right: int = 0
    flagged: int = 0
    moves: int = 0
    moves_right: int = 0
    moves_wrong: int = 0
    flagged_moves: int = 0
    flagged_moves_right: int = 0
    illegal: int = 0
    illegal_flagged: int = 0
    illegal_let_stand: int = 0
    failed_elsewhere: int = 0
    failed_only_elsewhere: int = 0
    #: One line per move accepted wrongly: ``where`` (as :meth:`judge` was told), the move
    #: played, the move accepted, the cells read otherwise than the board showed and ``bank``.
    wrong: list[str] = field(default_factory=list)

    def judge(
        self, game: Game, obs: Observation, played: Move, where: str = "", bank: str = ""
    ) -> None:
        """Count the referee's verdict on ``obs`` when ``played`` was the move made, and, when
        it is not that move, whether ``obs`` shows another content on a cell the move leaves
        alone (and whether only there). ``where`` and ``bank`` go before and after a wrong
        move's line."""
        self.moves += 1
        accepted = _accepted(game, obs)
        if accepted is not None:
            self.moves_right += accepted == played
            self.moves_wrong += accepted != played
        if accepted != played:
            view, changes = game.view(), game.changes_after(played)
            if accepted is not None:
                shown = {**view, **changes}
                self.wrong.append(f"{where}{_wrong_move(game, shown, obs, played, accepted)}{bank}")
            seen = {c: v for c, v in obs.cells.items() if c in view}
            elsewhere = any(v != view[c] for c, v in seen.items() if c not in changes)
            own = all(seen.get(c, ...) == v for c, v in changes.items())
            self.failed_elsewhere += elsewhere
            self.failed_only_elsewhere += elsewhere and own

    def judge_flagged(self, game: Game, told: Observation, played: Move) -> None:
        """Count a move whose clear board was found occluded (refused: the loop waits), and
        whether ``told`` (the board read as clear, as after the players' OK) is judged right."""
        self.moves += 1
        self.flagged_moves += 1
        self.flagged_moves_right += _accepted(game, told) == played

    def judge_illegal(self, game: Game, obs: Observation | None) -> None:
        """Count the referee's verdict on ``obs``, an illegal placement (None: no board found)."""
        self.illegal += 1
        verdict = _verdict(game, obs) if obs is not None else None
        if verdict is not None:
            self.illegal_flagged += verdict.kind == ILLEGAL
            self.illegal_let_stand += verdict.kind in (MOVE, NO_CHANGE)

    def score(self, truth: dict, before: dict | None, obs, geometry) -> None:
        """Count the read ``obs`` of a clear board ``truth`` (``before``: the last accepted)."""
        self.boards += 1
        self.right += not board_errors(geometry, truth, (), False, obs)
        self.flagged += obs.occluded or obs.partial
        for name, content in truth.items():
            if before is not None and before[name] != content:
                self.changed += 1
                self.changed_right += obs.cells.get(name, ...) == content


@dataclass(frozen=True)
class TableBench:
    """One game's figures."""

    game: str
    tables: int
    adapted: Tally
    plain: Tally

    def to_json(self) -> dict[str, float | int]:
        """The ``--json`` figures."""
        a, p = self.adapted, self.plain
        return {
            "tables": self.tables,
            "boards": a.boards,
            "boards_right": round(a.right / max(a.boards, 1), 4),
            "changed_cells": a.changed,
            "changed_right": round(a.changed_right / max(a.changed, 1), 4),
            "flagged": a.flagged,
            "boards_right_without_adapt": round(p.right / max(p.boards, 1), 4),
            "changed_right_without_adapt": round(p.changed_right / max(p.changed, 1), 4),
            "flagged_without_adapt": p.flagged,
            "moves": a.moves,
            "moves_right": round(a.moves_right / max(a.moves, 1), 4),
            "moves_wrong": a.moves_wrong,
            "moves_refused": a.moves - a.moves_right - a.moves_wrong,
            "failed_misread_elsewhere": a.failed_elsewhere,
            "failed_misread_only_elsewhere": a.failed_only_elsewhere,
            "moves_right_without_adapt": round(p.moves_right / max(p.moves, 1), 4),
            "moves_wrong_without_adapt": p.moves_wrong,
            "flagged_moves": a.flagged_moves,
            "flagged_moves_right": a.flagged_moves_right,
            "illegal_placements": a.illegal,
            "illegal_flagged": a.illegal_flagged,
            "illegal_let_stand": a.illegal_let_stand,
        }


def _verdict(game: Game, obs: Observation) -> Verdict | None:
    """The loop's verdict on ``obs``: decoded with the rules and judged (None: a close call, or
    an illegal act in doubt, the players are asked about)."""
    decoded = decode(game, obs)
    if len(decoded.close) > 1 or decoded.doubt is not None:
        return None
    return game.infer(decoded.observation)


def _accepted(game: Game, obs: Observation) -> Move | None:
    """The move the loop accepts on ``obs`` (None: refused, or a question to the players)."""
    verdict = _verdict(game, obs)
    return verdict.move if verdict is not None and verdict.kind == MOVE else None


def _wrong_move(
    game: Game, shown: dict[str, Content], obs: Observation, played: Move, accepted: Move
) -> str:
    """``played`` accepted as ``accepted``, and the cells ``obs`` read otherwise than ``shown``,
    the board after ``played`` (cell: shown -> read)."""
    misread = [
        f"{cell}: {_content(game, shown[cell])} -> {_content(game, read)}"
        for cell, read in obs.cells.items()
        if cell in shown and read != shown[cell]
    ]
    return f"{played} accepted as {accepted}; misread {', '.join(misread) or 'nothing'}"


def _content(game: Game, content: object) -> str:
    """A cell's content as its observation JSON shows it (``empty`` for an empty cell)."""
    shown = game.cell_to_json(content)
    if shown is None:
        return "empty"
    return shown if isinstance(shown, str) else json.dumps(shown, separators=(",", ":"))


def _played(referee: Game, truth: dict) -> Move:
    """The move that turned the referee's accepted board into ``truth``."""
    verdict = referee.infer(Observation(referee.name, truth))
    if verdict.kind != MOVE:
        raise AssertionError(f"a sample game's board is no legal move: {verdict.reason}")
    return verdict.move


def _table_has_seen(reader: FittedReader) -> str:
    """The classes ``reader``'s table bank holds examples of, with how many, for a wrong
    move's line."""
    classes, counts = reader.model.classes, reader.bank.counts()
    held = [f"{name} {n}" for name, n in zip(classes, counts, strict=True) if n]
    return f"; the table has seen {', '.join(held) or 'nothing'}"


def _reader(game: str, **options: object) -> FittedReader:
    """A reader of ``game`` (every game's is fitted, :data:`vision.readers.READERS`)."""
    reader = reader_for(game, **options)
    assert isinstance(reader, FittedReader), f"{game}'s reader is not fitted"
    return reader


def _plain(game: str) -> FittedReader:
    """A reader of ``game`` with its model's adaptation off."""
    return _reader(game, model=replace(model_for(game), adaptation=Adaptation()))


@dataclass(frozen=True)
class Shot:
    """One board of a filmed sample game: its frame, truth, pose (None: no board found) and
    the move that made it (None for the opening), judged against ``referee`` (the accepted
    state before it, played once the consumer moves on)."""

    image: np.ndarray
    truth: dict
    pose: BoardPose | None
    played: Move | None
    referee: Game
    #: The engine's reason when the board shows an illegal placement (``played`` is None; the
    #: players take it back, so the next board follows the accepted state).
    illegal: str | None = None


def filmed_game(
    game: str,
    key: int,
    domain: Domain,
    moves: int | None = None,
    render_key: int | None = None,
    illegal: bool = False,
    path_traced: bool = False,
    fresh_noise: bool = False,
) -> Iterator[Shot]:
    """The boards of the random legal game ``key`` of ``game``, each rendered with the same
    camera, light and box of ``domain`` (drawn from ``render_key``, default ``key``; the board a
    few mm off its outline) and located by one tracking locator, as a camera over one table
    films them. With ``illegal``, before one move (drawn from ``key``) a player first puts a
    legal move's pieces on the wrong cells (:func:`engine.attempts.illegal_attempt`), and
    takes them back. ``path_traced``: every board path-traced (:func:`~.synth.traced.render_traced`
    at :data:`~.bench.TRACED_SPP` samples a pixel; the board lies on its outline).
    ``fresh_noise``: every board filmed with sensor noise of its own
    (:func:`~.synth.photo.film`), as a camera films, not with the same noise each time."""
    geometry = load_geometry(game)
    codec = new_game(game)
    boards = random_game(game, key, MOVES if moves is None else moves)
    render_key = key if render_key is None else render_key
    shift = None if path_traced else random_board_shift(render_key, game)
    locator = BoardLocator([geometry])
    referee = new_game(game)
    rng = random.Random(key)
    attempt_at = rng.randrange(1, len(boards)) if illegal and len(boards) > 1 else len(boards)
    frames = 0

    def shoot(cells: dict, judged: bool, reason: str | None = None) -> Shot:
        nonlocal frames
        effects = not fresh_noise
        scene = (
            traced.render_traced(
                game, cells, render_key, domain=domain, spp=TRACED_SPP, effects=effects
            )
            if path_traced
            else render_scene(
                game,
                cells,
                render_key,
                hand=False,
                board_shift=shift,
                domain=domain,
                effects=effects,
            )
        )
        image = scene.image
        if fresh_noise:
            image = film(image, scene.params, np.random.default_rng([render_key, frames]))
        truth = {n: codec.cell_from_json(v) for n, v in scene.cells.items()}
        try:
            pose = locator.locate(image, frames * 0.1)
        except BoardNotFound:
            pose = None
        frames += 1
        played = _played(referee, truth) if judged else None
        return Shot(image, truth, pose, played, referee, reason)

    for k, cells in enumerate(boards):
        if k >= attempt_at:
            attempt = illegal_attempt(referee, rng)
            if attempt is not None:
                view, reason = attempt
                yield shoot({n: referee.cell_to_json(c) for n, c in view.items()}, False, reason)
                attempt_at = len(boards)
        shot = shoot(cells, k > 0)
        yield shot
        if shot.played is not None:
            referee.play(shot.played)


def bench_table(
    game: str, tables: int, seed: int, split: str, fresh_noise: bool = False
) -> TableBench:
    """Play and read ``tables`` sample games of ``game`` in ``split``'s domain
    (``fresh_noise``: every board filmed with noise of its own, :func:`filmed_game`)."""
    cv2.setNumThreads(1)
    geometry = load_geometry(game)
    adapted, plain = Tally(), Tally()
    for t in range(tables):
        key = zlib.crc32(f"table/{split}/{seed}/{game}/{t}".encode())
        readers = [_reader(game), _plain(game)]
        before = None
        domain, path_traced = split_domain(split, game), split in TRACED_SPLITS
        shots = filmed_game(
            game, key, domain, illegal=True, path_traced=path_traced, fresh_noise=fresh_noise
        )
        for k, shot in enumerate(shots):
            if shot.illegal is not None:  # judged, never accepted: nothing is learnt from it
                for reader, tally in zip(readers, (adapted, plain), strict=True):
                    obs = None
                    if shot.pose is not None:
                        obs = reader.read(shot.image, shot.pose)
                        if obs.occluded or obs.partial:  # the players press OK
                            obs = reader.read(shot.image, shot.pose, clear=True)
                    tally.judge_illegal(shot.referee, obs)
                continue
            if shot.pose is None:  # a board not read, a move not judged (refused)
                for tally in (adapted, plain):
                    tally.boards += 1
                    tally.moves += shot.played is not None
                before = None
                continue
            for reader, tally in zip(readers, (adapted, plain), strict=True):
                obs = reader.read(shot.image, shot.pose)
                tally.score(shot.truth, before, obs, geometry)
                if shot.played is not None and (obs.occluded or obs.partial):
                    told = reader.read(shot.image, shot.pose, clear=True)
                    tally.judge_flagged(shot.referee, told, shot.played)
                elif shot.played is not None:
                    where = f"table {t} board {k}: "
                    tally.judge(shot.referee, obs, shot.played, where, _table_has_seen(reader))
                reader.calibrate(shot.image, shot.pose, shot.truth)
            before = shot.truth
    return TableBench(game, tables, adapted, plain)


def cmd_bench_table(args: argparse.Namespace) -> int:
    """``referee bench table``: ``--json`` prints ``{"games": {...}, "heldout": {...}}`` as
    ``bench vision`` does (``games``: the corpus's nominal look); ``--failures`` lists the moves
    accepted wrongly on stderr."""

    def run(game: str, split: str) -> TableBench:
        bench = bench_table(game, args.tables, args.seed, split, args.fresh_noise)
        if args.failures:
            for line in bench.adapted.wrong:
                print(f"{split} {game} {line}", file=sys.stderr, flush=True)
        return bench

    return bench_splits(args, run, _line)


def _line(bench: TableBench) -> str:
    """One game's figures, in a line."""
    r = bench.to_json()
    return (
        f"boards right {100 * r['boards_right']:6.2f} % "
        f"(without adapting {100 * r['boards_right_without_adapt']:6.2f} %)  "
        f"changed cells right {100 * r['changed_right']:6.2f} % "
        f"({100 * r['changed_right_without_adapt']:6.2f} %) of {r['changed_cells']}  "
        f"flagged {r['flagged']} ({r['flagged_without_adapt']}) of {r['boards']}  "
        f"moves right {100 * r['moves_right']:6.2f} % "
        f"({100 * r['moves_right_without_adapt']:6.2f} %), wrong {r['moves_wrong']} "
        f"({r['moves_wrong_without_adapt']}) of {r['moves']}; flagged "
        f"{r['flagged_moves']}, right once OK said clear {r['flagged_moves_right']}"
    )
