"""Fit a model's ``decode`` margins (:mod:`vision.decode`) on whole games of the training
domain.

Each sample game is filmed and read as at a table (:func:`vision.bench_table.filmed_game`, every
board with sensor noise of its own as a camera films it, the model's reader calibrated on every
accepted board, its adaptation on), and once a game a player first puts a legal move's pieces on
the wrong cells (:func:`engine.attempts.illegal_attempt`) and takes them back. Every such board
is decoded twice with no close margin: reporting the likeliest illegal act
(:mod:`vision.decode`) whenever it is likelier than every legal explanation, and never; that
gives both verdicts, how much likelier that act is than the best legal explanation
(``Decoded.illegal_gap``) and how far the second-best explanation is behind the best
(``Decoded.margin``). An illegal margin ``i``, an ask margin ``a`` and a close margin ``c`` then
report the illegal act when its gap exceeds ``i``, ask the players about it when its gap exceeds
``a``, else ask them to confirm every board whose margin is below ``c``. The three of least cost
are kept: :data:`~vision.decode.WRONG_COST` per false verdict (another move accepted, or an
illegal placement let stand as a move or as no change), 1 per board refused (a legal move asked
about, called illegal, unclear or no change; an illegal placement asked about or unclear). Ties
go to asking about fewer illegal acts (none: ``a = i``), then to the smaller close margin, then
to the middle of the tied illegal margins.

A recipe's ``"decode_close": "one_se"`` then raises the close margin by the one-standard-error
rule (Breiman et al., *Classification and Regression Trees*, 1984; Hastie, Tibshirani and
Friedman, *The Elements of Statistical Learning*, 7.10): to the largest whose cost exceeds the
least by no more than one standard error of the difference, the games as the samples. A few
wrong moves in a few hundred games decide the least-cost close margin, and the world reads worse
than the training domain; among the margins the games cannot tell apart, the one that asks most.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

from engine import ILLEGAL, MOVE, NO_CHANGE, Game, Move, Observation

from ..bench_table import filmed_game
from ..decode import ILLEGAL_MARGIN, WRONG_COST, decode
from ..geometry import load_geometry
from ..model import CellModel
from .dataset import reader_class, training_domain
from .one_se import check_rule, within_one_se
from .pool import parallel_map

#: The close margins (nats) the fit chooses from: ln 1 (never ask) .. ln 64.
MARGINS = tuple(round(math.log(x), 4) for x in (1, 2, 3, 4, 6, 8, 12, 16, 32, 64))
#: The illegal margins (nats) the fit chooses from: ln 4 .. ln 2**20 (one cell read wrongly at
#: full confidence costs at most ln 10**4, :data:`vision.decode.EPSILON`).
ILLEGAL_MARGINS = tuple(
    round(math.log(x), 4) for x in (4, 8, 16, 50, 128, 512, 2048, 8192, 2**15, 2**17, 2**20)
)
#: The ask margins (nats) the fit chooses from, below the illegal margin (at it: never ask):
#: from an illegal act ln 4 less likely than the best legal explanation up.
ASK_MARGINS = tuple(round(math.log(x), 4) for x in (0.25, 0.5, 1, 2)) + ILLEGAL_MARGINS
#: Verdicts of a board when nobody is asked.
RIGHT, WRONG, REFUSED = "right", "wrong", "refused"


@dataclass(frozen=True)
class Judged:
    """One filmed board's verdicts: a legal move (``illegal`` False) or an illegal placement."""

    illegal: bool
    #: The verdict when the illegal act is reported, and when the best legal one is taken.
    trusted: str
    decoded: str
    #: Nats the illegal act is likelier than the best legal explanation (inf: partial).
    gap: float
    #: Nats the second-best legal explanation is behind the best.
    margin: float

    def outcome(self, illegal_margin: float, close_margin: float, ask_margin: float) -> str:
        """The verdict with these margins (a question is a refusal)."""
        if self.gap > illegal_margin:
            return self.trusted
        if self.gap > ask_margin or self.margin < close_margin:
            return REFUSED
        return self.decoded


def _outcome(game: Game, obs: Observation, played: Move | None) -> str:
    """The verdict on ``obs`` of a board made by ``played`` (None: an illegal placement)."""
    verdict = game.infer(obs)
    if played is None:
        if verdict.kind == ILLEGAL:
            return RIGHT
        return WRONG if verdict.kind in (MOVE, NO_CHANGE) else REFUSED
    if verdict.kind != MOVE:
        return REFUSED
    return RIGHT if verdict.move == played else WRONG


def judged_boards(model: CellModel, recipe: dict[str, Any], index: int, seed: int) -> list[Judged]:
    """Every judged board of sample game ``index`` (its moves and its illegal placement)."""
    games = recipe["games"]
    game = games[index % len(games)]
    key = zlib.crc32(f"decode/{seed}/{index}".encode())
    reader = reader_class(recipe["reader"])(load_geometry(game), model=model)
    out: list[Judged] = []
    for shot in filmed_game(game, key, training_domain(recipe), illegal=True, fresh_noise=True):
        judged = shot.played is not None or shot.illegal is not None
        if shot.pose is None:
            if judged:
                out.append(Judged(shot.illegal is not None, REFUSED, REFUSED, math.inf, math.inf))
            continue
        if judged:
            obs = reader.read(shot.image, shot.pose)
            never = decode(shot.referee, obs, close_within=0.0, illegal_beyond=math.inf)
            trusted = decode(shot.referee, obs, close_within=0.0, illegal_beyond=0.0)
            out.append(
                Judged(
                    shot.illegal is not None,
                    _outcome(shot.referee, trusted.observation, shot.played),
                    _outcome(shot.referee, never.observation, shot.played),
                    never.illegal_gap,
                    never.margin,
                )
            )
        if shot.illegal is None:
            reader.calibrate(shot.image, shot.pose, shot.truth)
    return out


#: The fitted margins: (illegal, close, ask), in nats.
Margins = tuple[float, float, float]


def _counts(boards: list[Judged], margins: Margins) -> dict[str, int]:
    counts = {RIGHT: 0, WRONG: 0, REFUSED: 0}
    for board in boards:
        counts[board.outcome(*margins)] += 1
    return counts


def _cost(boards: list[Judged], margins: Margins) -> float:
    """What ``boards`` cost with ``margins``: WRONG_COST per false verdict, 1 per refusal."""
    counts = _counts(boards, margins)
    return WRONG_COST * counts[WRONG] + counts[REFUSED]


def tied_margins(boards: list[Judged]) -> list[Margins]:
    """The (illegal, close, ask) margins of least cost on ``boards``: per illegal margin of
    :data:`ILLEGAL_MARGINS` the ask margin of :data:`ASK_MARGINS` below it asking about the
    fewest acts (the illegal margin itself: none), then the smallest close margin, of least
    cost, where that is the least cost of all."""
    costs: list[tuple[float, Margins]] = []
    for illegal_margin in ILLEGAL_MARGINS:
        below = sorted((a for a in ASK_MARGINS if a < illegal_margin), reverse=True)
        asks = [illegal_margin, *below]
        best: tuple[float, Margins] | None = None
        for ask_margin in asks:
            for close_margin in MARGINS:
                margins = (illegal_margin, close_margin, ask_margin)
                cost = _cost(boards, margins)
                if best is None or cost < best[0]:
                    best = (cost, margins)
        assert best is not None
        costs.append(best)
    least = min(cost for cost, _ in costs)
    return [margins for cost, margins in costs if cost == least]


def choose_margins(boards: list[Judged]) -> Margins:
    """The (illegal, close, ask) margins of least cost on ``boards`` (ties: the fewest illegal
    acts asked about, the smaller close margin, then the middle of the tied illegal margins)."""
    return _middle(tied_margins(boards))


def _game_costs(games: list[list[Judged]], margins: Margins) -> list[float]:
    """Each game's cost with ``margins`` (:func:`_cost`)."""
    return [_cost(g, margins) for g in games]


def cautious_margins(games: list[list[Judged]], least: Margins) -> Margins:
    """The least-cost margins on every board of ``games`` (``least``, :func:`choose_margins`),
    the close margin raised to the largest of :data:`MARGINS` whose cost over the games exceeds
    theirs by no more than one standard error of the per-game difference (none: at most their
    cost)."""
    illegal_margin, close, ask_margin = least
    base = _game_costs(games, least)
    chosen = close
    for candidate in (m for m in MARGINS if m > close):
        if within_one_se(_game_costs(games, (illegal_margin, candidate, ask_margin)), base):
            chosen = candidate
    return (illegal_margin, chosen, ask_margin)


def _middle(tied: list[Margins]) -> Margins:
    """The middle (the lower of two) of the tied margins, :func:`tied_margins`."""
    return tied[(len(tied) - 1) // 2]


def _job(args: tuple[Path, dict[str, Any], int, int]) -> list[Judged]:
    cv2.setNumThreads(1)
    path, recipe, index, seed = args
    return judged_boards(CellModel.load(path), recipe, index, seed)


def judge_games(
    model_path: Path, recipe: dict[str, Any], games: int, seed: int, workers: int | None = None
) -> list[list[Judged]]:
    """Every judged board of each of ``games`` sample games (:func:`judged_boards`) of the model
    at ``model_path``, on ``workers`` processes."""
    jobs = [(model_path, recipe, i, seed) for i in range(games)]
    return parallel_map(_job, jobs, workers)


def fit_margins(
    games: list[list[Judged]], close_rule: str = "least"
) -> tuple[dict[str, float], dict[str, Any]]:
    """The ``decode`` margins fitted on the judged boards of each sample game
    (:func:`judge_games`), the close margin by ``close_rule`` (:data:`.one_se.RULES`), and the
    figures of the fit: moves right, wrong and refused with them, the least-cost close margin,
    the least and the largest illegal margin of the same least cost, illegal placements flagged
    and let stand with them and with :data:`vision.decode.ILLEGAL_MARGIN` (and no ask margin),
    and moves and illegal placements asked about as illegal acts."""
    check_rule("decode_close", close_rule)
    boards = [b for g in games for b in g]
    tied = tied_margins(boards)
    least = _middle(tied)
    margins = cautious_margins(games, least) if close_rule == "one_se" else least
    illegal_margin, close_margin, ask_margin = margins
    moves = [b for b in boards if not b.illegal]
    attempts = [b for b in boards if b.illegal]
    counts = _counts(moves, margins)
    fixed = _counts(attempts, (ILLEGAL_MARGIN, close_margin, ILLEGAL_MARGIN))
    fitted = _counts(attempts, margins)

    def asked(boards: list[Judged]) -> int:
        return sum(ask_margin < b.gap <= illegal_margin for b in boards)

    figures = {
        "decode_games": len(games),
        "decode_close_rule": close_rule,
        "decode_close_margin_least": least[1],
        "decode_moves": len(moves),
        **{f"decode_{k}": v for k, v in counts.items()},
        "decode_illegal": len(attempts),
        "decode_illegal_margins_tied": [tied[0][0], tied[-1][0]],
        "decode_illegal_flagged": fitted[RIGHT],
        "decode_illegal_let_stand": fitted[WRONG],
        "decode_illegal_flagged_at_ln50": fixed[RIGHT],
        "decode_illegal_let_stand_at_ln50": fixed[WRONG],
        "decode_moves_asked_illegal": asked(moves),
        "decode_illegal_asked": asked(attempts),
    }
    fitted_margins = {"illegal_margin": illegal_margin, "close_margin": close_margin}
    return {**fitted_margins, "ask_margin": ask_margin}, figures
