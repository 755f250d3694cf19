"""Decode with the rules: let the legal moves resolve cells the reader is unsure about.

A reader gives, for every visible cell, probabilities over its possible contents. Trusting each
cell alone (the argmax board) rejects legal moves whenever one cell is misread. Instead every
explanation is scored by its log-likelihood: no change, each legal move from the accepted state,
and each act the rules may forbid (:func:`engine.attempts.placements`: one legal move's pieces
put down on other cells the reader is unsure about, or in another player's colour;
:func:`engine.attempts.takebacks`: an earlier move's pieces lifted off again). The best legal
explanation wins unless the best illegal act is much more likely, which means the players
really did something the rules forbid: then that act is reported and the engine flags it, never
"corrected" into a legal move. An illegal explanation is one act of the players, not the whole
argmax board, so a cell the move left alone and the reader misread does not turn a legal move
into an illegal one (once the game is over, the argmax board is the explanation: nothing may be
placed). When the two best legal explanations are close, the result says so, so the appliance
can ask the players to confirm; and when the illegal act is likelier than the best legal
explanation, but not by the illegal margin, the appliance asks the players which of the two
they did (``Decoded.doubt``).

How much likelier the illegal act must be to be reported (the illegal margin) or put to the
players (the ask margin), and how close is close, are fitted, per model, on whole games of the
training domain with an illegal placement in each (``vision.train.decode``: a false verdict
costs as much as :data:`WRONG_COST` questions to the players) and kept in the model file's
``decode``; :data:`ILLEGAL_MARGIN` and :data:`CLOSE_MARGIN` are for a model without them (and
such a model asks about no illegal act).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine import Game, Move, Observation
from engine.attempts import placements, takebacks
from engine.core import Content

#: Probability floor: a reader is never absolutely sure.
EPSILON = 1e-4
#: The best illegal act must be more than this many nats likelier than every legal
#: explanation to be reported (ln 50: fifty times likelier; a model file's fitted
#: ``decode.illegal_margin`` replaces it).
ILLEGAL_MARGIN = math.log(50.0)
#: Two legal explanations closer than this (ln 4) are "close": the players are asked to confirm
#: (a model file's fitted ``decode.close_margin`` replaces it).
CLOSE_MARGIN = math.log(4.0)
#: Legal explanations ranked, best first (``Decoded.ranked``): a question to the players shows
#: them two at a time, the next two when neither is what they did.
RANKED = 6
#: What a move accepted wrongly costs, in moves the players are asked to confirm (the fit's
#: objective: a wrong score stands unless someone notices, a question costs a button press).
WRONG_COST = 10.0


@dataclass(frozen=True)
class Opening:
    """A first move of another player than the one to move, while the first piece placed decides
    who starts (:attr:`engine.Game.first_is_open`): ``player`` opens with ``move``, which
    changes the cells ``changes`` (name, content pairs)."""

    player: str
    move: Move
    changes: tuple[tuple[str, Content], ...]

    def __str__(self) -> str:
        return f"{self.player} {self.move}"


@dataclass(frozen=True)
class Decoded:
    """The observation to judge, and how sure the decoding is."""

    observation: Observation
    move: Move | Opening | None
    close: tuple[Move | Opening | None, ...] = ()
    #: The likeliest legal explanations, best first (``close`` first, then the next ones,
    #: whatever their margin; at most :data:`RANKED`; none when nothing was decoded).
    ranked: tuple[Move | Opening | None, ...] = ()
    margin: float = math.inf
    #: True when the observation is an illegal act, or partial (nothing was decoded).
    as_seen: bool = False
    #: How many nats likelier the best illegal act is than the best legal explanation
    #: (-inf: there is none; inf: nothing was decoded, the observation is partial).
    illegal_gap: float = math.inf
    #: When an illegal act is reported: the likeliest legal move, which the players may
    #: say they made (None: no change was likelier than any move).
    nearest: Move | Opening | None = None
    #: An illegal act likelier than the best legal explanation (``move``) by more than the ask
    #: margin but not by the illegal margin, as an observation: the players are asked which of
    #: the two they did (None: nothing to ask).
    doubt: Observation | None = None
    #: How many nats less likely than no change each of ``ranked`` is (no change 0; negative:
    #: likelier than no change).
    costs: tuple[float, ...] = ()


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


def ask_margin(game: str) -> float:
    """The fitted ask margin of ``game``'s model (without one: its illegal margin, so that no
    illegal act is asked about)."""
    return _fitted(game, "ask_margin", illegal_margin(game))


def legal_changes(game: Game) -> list[tuple[Move, dict[str, Content]]]:
    """Every legal move of ``game`` with the cells it changes (none once the game is over)."""
    if game.is_over:
        return []
    return [(move, game.changes_after(move)) for move in game.legal_moves()]


def opening_changes(game: Game) -> list[tuple[Opening, dict[str, Content]]]:
    """While the first piece placed decides who starts: every first move of the players other
    than the one to move, with the cells it changes (none once the first player is decided)."""
    if not game.first_is_open:
        return []
    openings = []
    for player in game.players:
        if player == game.to_move:
            continue
        trial = game.copy()
        trial.open_with(player)
        for move, changes in legal_changes(trial):
            openings.append((Opening(player, move, tuple(changes.items())), changes))
    return openings


def decode(
    game: Game,
    obs: Observation,
    close_within: float | None = None,
    illegal_beyond: float | None = None,
    ask_beyond: float | None = None,
) -> Decoded:
    """The most likely observation given the reader's per-cell probabilities and the rules;
    explanations within ``close_within`` nats of the best are close (default: the model's
    :func:`close_margin`), the likeliest illegal act is reported when it is more than
    ``illegal_beyond`` nats likelier than every legal explanation (default: the model's
    :func:`illegal_margin`), and put to the players as ``doubt`` when it is more than
    ``ask_beyond`` nats likelier but not reported (default: the model's :func:`ask_margin`)."""
    within = close_margin(game.name) if close_within is None else close_within
    beyond = illegal_margin(game.name) if illegal_beyond is None else illegal_beyond
    ask = ask_margin(game.name) if ask_beyond is None else ask_beyond
    probs = obs.probabilities
    if not probs or obs.partial:
        return Decoded(obs, None, as_seen=True)
    view = game.view()
    visible = [name for name in view if name in probs]

    def gain(changes: dict[str, Content]) -> float:
        return sum(_cost(probs[c], new) - _cost(probs[c], view[c]) for c, new in changes.items())

    unsure = {c for c in visible if probs[c].get(view[c], 0.0) < 1.0 - 1e-3}
    legal: list[tuple[Move | Opening, dict[str, Content]]] = []
    if unsure:
        legal = [*legal_changes(game), *opening_changes(game)]
    scored: list[tuple[float, Move | Opening | None, dict[str, Content]]] = [(0.0, None, {})]
    for move, changes in legal:
        if all(c in probs for c in changes) and changes.keys() & unsure:
            scored.append((gain(changes), move, changes))
    scored.sort(key=lambda item: item[0])
    best_cost, best_move, best_changes = scored[0]

    illegal_cost, illegal = _likeliest_illegal(game, probs, visible, unsure, legal, gain)
    gap = best_cost - illegal_cost
    cells = dict(obs.cells)
    cells.update({c: view[c] for c in visible})
    ranked = tuple(m for _, m, _ in scored[:RANKED])
    costs = tuple(cost for cost, _, _ in scored[:RANKED])
    if gap > beyond:
        cells.update(illegal)
        return Decoded(
            replace(obs, cells=cells),
            None,
            ranked=ranked,
            costs=costs,
            as_seen=True,
            illegal_gap=gap,
            nearest=best_move,
        )

    doubt = replace(obs, cells={**cells, **illegal}) if gap > ask else None
    cells.update(best_changes)
    margin = scored[1][0] - best_cost if len(scored) > 1 else math.inf
    close = tuple(m for cost, m, _ in scored[:3] if cost - best_cost < within)
    close = close if len(close) > 1 else ()
    return Decoded(
        replace(obs, cells=cells),
        best_move,
        close,
        ranked,
        margin,
        illegal_gap=gap,
        doubt=doubt,
        costs=costs,
    )


def _likeliest_illegal(
    game: Game,
    probs: dict[str, dict[Content, float]],
    visible: list[str],
    unsure: set[str],
    legal: list[tuple[Move | Opening, dict[str, Content]]],
    gain: Callable[[dict[str, Content]], float],
) -> tuple[float, dict[str, Content]]:
    """The likeliest illegal explanation and its cost: a placement, or an earlier move taken
    back, on unsure cells that no legal move makes (once the game is over: the argmax board's
    changes)."""
    if game.is_over:
        view = game.view()
        argmax = {c: max(probs[c].items(), key=lambda kv: kv[1])[0] for c in visible}
        changes = {c: a for c, a in argmax.items() if a != view[c]}
        return (gain(changes), changes) if changes else (math.inf, {})
    if not unsure:
        return math.inf, {}  # every act is on unsure cells
    made = {frozenset(changes.items()) for _, changes in legal}
    contents = {content for c in unsure for content in probs[c]}
    best: tuple[float, dict[str, Content]] = (math.inf, {})
    acts = placements(game, unsure, (ch for _, ch in legal), contents) + takebacks(game, unsure)
    for changes in acts:
        seen = all(content in probs[c] for c, content in changes.items())
        if seen and frozenset(changes.items()) not in made:
            cost = gain(changes)
            if cost < best[0]:
                best = (cost, changes)
    return best
