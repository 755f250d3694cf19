"""Decode with the rules: let the legal moves resolve cells the reader is unsure about.

A reader gives, for every visible cell, probabilities over its possible contents. Trusting each
cell alone (the argmax board) rejects legal moves whenever one cell is misread. Instead every
explanation is scored by its log-likelihood: no change, each legal move from the accepted state,
and the argmax board itself. The best legal explanation wins unless the argmax board is much more
likely, which means the players really did something the rules forbid: then the argmax board is
reported and the engine flags it, never "corrected" into a legal move. When the two best legal
explanations are close, the result says so, so the appliance can ask the players to confirm.

How close is close is fitted, per model, on whole games of the training domain
(``vision.train.decode``: a false verdict costs as much as :data:`WRONG_COST` questions to the
players) and kept in the model file's ``decode``; :data:`CLOSE_MARGIN` is for a model without
it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine import Game, Move, Observation
from engine.core import Content

#: Probability floor: a reader is never absolutely sure.
EPSILON = 1e-4
#: The argmax board must be this many nats likelier than every legal explanation to be reported
#: as seen (ln 50: fifty times likelier).
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


def _cost(probs: dict[Content, float], content: Content) -> float:
    return -math.log(max(probs.get(content, 0.0), EPSILON))


def close_margin(game: str) -> float:
    """The fitted close margin of ``game``'s model (:data:`CLOSE_MARGIN` without one)."""
    from .model import ModelError, model_for

    try:
        fitted = model_for(game).meta.get("decode", {})
    except (ModelError, ValueError):
        return CLOSE_MARGIN
    return float(fitted.get("close_margin", CLOSE_MARGIN))


def decode(game: Game, obs: Observation, close_within: float | None = None) -> Decoded:
    """The most likely observation given the reader's per-cell probabilities and the rules;
    explanations within ``close_within`` nats of the best are close (default: the model's
    :func:`close_margin`)."""
    within = close_margin(game.name) if close_within is None else close_within
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

    if best_cost - argmax_cost > ILLEGAL_MARGIN:
        cells = dict(obs.cells)
        cells.update(argmax)
        return Decoded(replace(obs, cells=cells), None, trusted_argmax=True)

    cells = dict(obs.cells)
    cells.update({c: view[c] for c in visible})
    cells.update(best_changes)
    margin = scored[1][0] - best_cost if len(scored) > 1 else math.inf
    close = tuple(m for cost, m, _ in scored[:3] if cost - best_cost < within)
    return Decoded(replace(obs, cells=cells), best_move, close if len(close) > 1 else (), margin)
