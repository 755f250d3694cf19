"""Decode with the rules: let the legal moves resolve cells the reader is unsure about.

A reader gives, for every visible cell, probabilities over its possible contents. Trusting each
cell alone (the argmax board) rejects legal moves whenever one cell is misread. Instead every
explanation is scored by its log-likelihood: no change, each legal move from the accepted state,
and the argmax board itself. The best legal explanation wins unless the argmax board is much more
likely, which means the players really did something the rules forbid: then the argmax board is
reported and the engine flags it, never "corrected" into a legal move. When the two best legal
explanations are close, the result says so, so the appliance can ask the players to confirm.

How much likelier the argmax board must be (the illegal margin) and how close is close are
fitted, per model, on whole games of the training domain with an illegal placement in each
(``vision.train.decode``: a false verdict costs as much as :data:`WRONG_COST` questions to the
players) and kept in the model file's ``decode``; :data:`ILLEGAL_MARGIN` and
:data:`CLOSE_MARGIN` are for a model without them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine import Game, Move, Observation
from engine.core import Content

#: Probability floor: a reader is never absolutely sure.
EPSILON = 1e-4
#: The argmax board must be more than this many nats likelier than every legal explanation to be
#: reported as seen (ln 50: fifty times likelier; a model file's fitted ``decode.illegal_margin``
#: replaces it).
ILLEGAL_MARGIN = math.log(50.0)
#: Two legal explanations closer than this (ln 4) are "close": the players are asked to confirm
#: (a model file's fitted ``decode.close_margin`` replaces it).
CLOSE_MARGIN = math.log(4.0)
#: What a move accepted wrongly costs, in moves the players are asked to confirm (the fit's
#: objective: a wrong score stands unless someone notices, a question costs a button press).
WRONG_COST = 10.0


@dataclass(frozen=True)
class Decoded:
    """The observation to judge, and how sure the decoding is."""

    observation: Observation
    move: Move | None
    close: tuple[Move | None, ...] = ()
    margin: float = math.inf
    trusted_argmax: bool = False
    #: How many nats likelier the argmax board is than the best legal explanation (0: the
    #: argmax board is explained; inf: nothing was decoded, the observation is partial).
    argmax_gap: float = math.inf
    #: When the argmax board is reported: the likeliest legal move, which the players may say
    #: they made (None: no change was likelier than any move).
    nearest: Move | None = None


def _cost(probs: dict[Content, float], content: Content) -> float:
    return -math.log(max(probs.get(content, 0.0), EPSILON))


def _fitted(game: str, key: str, default: float) -> float:
    """``decode[key]`` of ``game``'s model file (``default`` without one)."""
    from .model import ModelError, model_for

    try:
        fitted = model_for(game).meta.get("decode", {})
    except (ModelError, ValueError):
        return default
    return float(fitted.get(key, default))


def close_margin(game: str) -> float:
    """The fitted close margin of ``game``'s model (:data:`CLOSE_MARGIN` without one)."""
    return _fitted(game, "close_margin", CLOSE_MARGIN)


def illegal_margin(game: str) -> float:
    """The fitted illegal margin of ``game``'s model (:data:`ILLEGAL_MARGIN` without one)."""
    return _fitted(game, "illegal_margin", ILLEGAL_MARGIN)


def decode(
    game: Game,
    obs: Observation,
    close_within: float | None = None,
    illegal_beyond: float | None = None,
) -> Decoded:
    """The most likely observation given the reader's per-cell probabilities and the rules;
    explanations within ``close_within`` nats of the best are close (default: the model's
    :func:`close_margin`), and the argmax board is reported as seen when it is more than
    ``illegal_beyond`` nats likelier than every legal explanation (default: the model's
    :func:`illegal_margin`)."""
    within = close_margin(game.name) if close_within is None else close_within
    beyond = illegal_margin(game.name) if illegal_beyond is None else illegal_beyond
    probs = obs.probabilities
    if not probs or obs.partial:
        return Decoded(obs, None, trusted_argmax=True)
    view = game.view()
    visible = [name for name in view if name in probs]

    def gain(changes: dict[str, Content]) -> float:
        return sum(_cost(probs[c], new) - _cost(probs[c], view[c]) for c, new in changes.items())

    argmax = {c: max(probs[c].items(), key=lambda kv: kv[1])[0] for c in visible}
    argmax_changes = {c: a for c, a in argmax.items() if a != view[c]}
    argmax_cost = gain(argmax_changes)

    unsure = {c for c in visible if probs[c].get(view[c], 0.0) < 1.0 - 1e-3}
    scored: list[tuple[float, Move | None, dict[str, Content]]] = [(0.0, None, {})]
    if unsure and not game.is_over:
        for move in game.legal_moves():
            changes = game.changes_after(move)
            if all(c in probs for c in changes) and changes.keys() & unsure:
                scored.append((gain(changes), move, changes))
    scored.sort(key=lambda item: item[0])
    best_cost, best_move, best_changes = scored[0]

    gap = best_cost - argmax_cost
    if gap > beyond:
        cells = dict(obs.cells)
        cells.update(argmax)
        return Decoded(
            replace(obs, cells=cells), None, trusted_argmax=True, argmax_gap=gap, nearest=best_move
        )

    cells = dict(obs.cells)
    cells.update({c: view[c] for c in visible})
    cells.update(best_changes)
    margin = scored[1][0] - best_cost if len(scored) > 1 else math.inf
    close = tuple(m for cost, m, _ in scored[:3] if cost - best_cost < within)
    close = close if len(close) > 1 else ()
    return Decoded(replace(obs, cells=cells), best_move, close, margin, argmax_gap=gap)
