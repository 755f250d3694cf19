"""Decoding with the rules: a misread cell is resolved by the legal moves, a confidently seen
illegal placement is still flagged, and near ties are reported for the players to confirm."""

import math
import random

import pytest

from engine import AMBIGUOUS, ILLEGAL, MOVE, Event, Observation, new_game
from engine.grid import parse_square, square_name
from engine.referee import Referee
from vision.decode import CLOSE_MARGIN, Opening, decode, opening_changes

from .data.models import edited_models
from .forbidden import forbidden_squares

COLOURS = ("orange", "violet", None)


def _probabilities(view, sure=0.98, overrides=None):
    """Per-cell probabilities: ``sure`` on the cell's true content, the rest spread out."""
    probs = {}
    for cell, content in view.items():
        rest = (1.0 - sure) / (len(COLOURS) - 1)
        probs[cell] = {c: (sure if c == content else rest) for c in COLOURS}
    for cell, dist in (overrides or {}).items():
        probs[cell] = dist
    return probs


def _game_after(moves):
    game = new_game("blokus")
    rng = random.Random(5)
    for _ in range(moves):
        game.play(game.random_move(rng))
    return game, rng


def _lone_square(game):
    """The board with one square of the mover's colour on the first empty cell where the rules
    forbid it (far from any of its pieces)."""
    view = game.view()
    for cell, content in view.items():
        board = {**view, cell: game.to_move}
        if content is None and game.infer(Observation("blokus", board)).kind == ILLEGAL:
            return board
    raise AssertionError("no such cell")


def test_one_misread_square_is_resolved_by_the_legal_move():
    game, rng = _game_after(4)
    move = game.random_move(rng)
    after = dict(game.view())
    after.update(game.changes_after(move))
    misread = move.cells()[0]
    # The reader leans the wrong way on one square of the new piece: 55 % "empty".
    probs = _probabilities(after, overrides={misread: {"orange": 0.0, "violet": 0.0, None: 0.55}})
    probs[misread][after[misread]] = 0.45
    argmax = {c: max(p, key=p.get) for c, p in probs.items()}
    obs = Observation("blokus", argmax, probabilities=probs)
    assert game.infer(obs).kind != MOVE  # trusting each square alone fails
    decoded = decode(game, obs)
    assert decoded.move == move
    assert game.infer(decoded.observation).move == move


def test_a_confidently_seen_illegal_placement_is_not_corrected():
    game, _ = _game_after(4)
    # A monomino-sized blob of the mover's colour far from any of its pieces, seen for sure.
    seen = _lone_square(game)
    probs = _probabilities(seen, sure=0.999)
    decoded = decode(game, Observation("blokus", seen, probabilities=probs))
    assert decoded.as_seen
    assert game.infer(decoded.observation).kind == ILLEGAL


def test_an_unchanged_board_read_with_noise_is_no_change():
    game, _ = _game_after(6)
    probs = _probabilities(game.view(), sure=0.9)
    decoded = decode(game, Observation("blokus", dict(game.view()), probabilities=probs))
    assert decoded.move is None and decoded.observation.cells == game.view()


def test_two_close_explanations_are_reported():
    game, _ = _game_after(4)
    moves = list(game.legal_moves())
    a = next(m for m in moves if len(m.cells()) == 5)
    changes_a = game.changes_after(a)
    # Cells of move a are only 50/50 between empty and the mover's colour: "no change" and "a"
    # are equally likely.
    overrides = {c: {game.to_move: 0.5, None: 0.5} for c in changes_a}
    probs = _probabilities(game.view(), sure=0.999, overrides=overrides)
    argmax = {c: max(p, key=p.get) for c, p in probs.items()}
    # the default margin, not the model file's (whose fit may choose never to ask: ln 1)
    decoded = decode(game, Observation("blokus", argmax, probabilities=probs), CLOSE_MARGIN)
    assert len(decoded.close) >= 2
    assert decoded.margin < 1.0


def test_a_close_call_ranks_the_likeliest_legal_explanations_beyond_the_close_ones():
    from vision.decode import RANKED

    game, _ = _game_after(4)
    a = next(m for m in game.legal_moves() if len(m.cells()) == 5)
    overrides = {c: {game.to_move: 0.5, None: 0.5} for c in game.changes_after(a)}
    probs = _probabilities(game.view(), sure=0.999, overrides=overrides)
    argmax = {c: max(p, key=p.get) for c, p in probs.items()}
    obs = Observation("blokus", argmax, probabilities=probs)
    decoded = decode(game, obs, CLOSE_MARGIN)
    ranked = decoded.ranked
    assert ranked[: len(decoded.close)] == decoded.close and len(ranked) == RANKED
    assert len(set(ranked)) == len(ranked) and a in ranked and None in ranked

    def cost(move):  # what the decoder minimises: minus the log-likelihood of the board
        board = {**game.view(), **(game.changes_after(move) if move is not None else {})}
        return -sum(math.log(max(probs[c].get(board[c], 0.0), 1e-4)) for c in probs)

    costs = [cost(m) for m in ranked]
    assert costs == sorted(costs)
    others = [m for m in game.legal_moves() if m not in ranked]
    assert min(cost(m) for m in others) >= costs[-1] - 1e-9
    assert decode(game, obs, close_within=0.0).ranked == ranked  # a close call or not


def test_the_close_margin_comes_from_the_model_file_and_asks_within_it():
    from vision.decode import CLOSE_MARGIN, close_margin
    from vision.model import model_for

    for name in ("gobsmacked", "gobblet", "blokus", "blokus-duo", "spectrangle"):
        fitted = model_for(name).meta.get("decode", {})
        assert close_margin(name) == fitted.get("close_margin", CLOSE_MARGIN)
    game, _ = _game_after(4)
    a = next(m for m in game.legal_moves() if len(m.cells()) == 5)
    # move a is 3:1 against no change on each of its cells: the best, by ln(3^5) nats
    overrides = {c: {game.to_move: 0.75, None: 0.25} for c in game.changes_after(a)}
    probs = _probabilities(game.view(), sure=0.999, overrides=overrides)
    argmax = {c: max(p, key=p.get) for c, p in probs.items()}
    obs = Observation("blokus", argmax, probabilities=probs)
    gap = decode(game, obs, close_within=0.0).margin
    assert decode(game, obs, close_within=0.0).move == a and not decode(game, obs, 0.0).close
    assert len(decode(game, obs, close_within=gap + 0.01).close) >= 2


def test_the_fit_asks_when_a_false_verdict_costs_more_than_the_questions():
    from vision.decode import WRONG_COST
    from vision.train.decode import MARGINS, REFUSED, RIGHT, WRONG, Judged, choose_margins

    def moves(outcome, margin, n=1):
        # legal moves whose argmax board the rules explain (gap 0): only the close margin acts
        return [Judged(False, outcome, outcome, 0.0, margin)] * n

    # wrong verdicts have small gaps, right ones large: a margin between them is best
    boards = moves(WRONG, 0.5, 2) + moves(RIGHT, 3.0, 50) + moves(RIGHT, 0.2, 5)
    close = choose_margins(boards + moves(REFUSED, 9.0))[1]
    assert 0.5 < close <= 3.0
    # with no wrong verdict to avoid, asking never pays: the smallest margin
    assert choose_margins(moves(RIGHT, 0.3, 10))[1] == MARGINS[0]
    # one wrong verdict is worth asking at most WRONG_COST right moves about
    cheap = moves(WRONG, 0.4) + moves(RIGHT, 0.3, int(WRONG_COST + 1))
    assert choose_margins(cheap)[1] == MARGINS[0]


def test_the_one_se_rule_asks_more_only_where_the_games_cannot_tell_the_costs_apart():
    from vision.train.decode import MARGINS, RIGHT, WRONG, Judged, choose_margins, fit_margins
    from vision.train.decode import cautious_margins as cautious_fit

    def cautious_margins(games):
        return cautious_fit(games, choose_margins([b for g in games for b in g]))

    sure = [Judged(False, RIGHT, RIGHT, 0.0, 5.0)] * 20  # past every close margin

    def close(outcome):  # a board 1 nat ahead of the next explanation: ln 2 < 1 < ln 3
        return [Judged(False, outcome, outcome, 0.0, 1.0)]

    # two wrong moves in 100 games against twenty right ones as close: asking about the 22
    # costs 22 against 20, a difference well within the games' noise: asked about
    games = [sure + close(WRONG)] * 2 + [sure + close(RIGHT)] * 20 + [sure] * 78
    margins, figures = fit_margins(games, "least")
    assert margins["close_margin"] == MARGINS[0] == figures["decode_close_margin_least"]
    assert cautious_margins(games)[1] == MARGINS[-1]
    margins, figures = fit_margins(games, "one_se")
    assert margins["close_margin"] == MARGINS[-1] and figures["decode_close_margin_least"] == 0
    assert figures["decode_close_rule"] == "one_se" and figures["decode_games"] == 100
    # three close right moves a game and no wrong one: asking about them costs 300, SE 10; the
    # margins below them cost alike, and of those the largest is kept
    steady = [sure + close(RIGHT) * 2] * 50 + [sure + close(RIGHT) * 4] * 50
    assert cautious_margins(steady)[1] == max(m for m in MARGINS if m < 1.0)
    with pytest.raises(ValueError, match="decode_close"):
        fit_margins(games, "widest")


def test_the_fit_flags_placements_read_surer_than_the_misread_legal_moves():
    from vision.train.decode import ILLEGAL_MARGINS, REFUSED, RIGHT, WRONG, Judged, choose_margins

    # legal moves misread by up to 3 nats (trusting their argmax board would refuse them),
    # illegal placements seen 7 nats surer than any legal explanation (else let stand)
    legal = [Judged(False, REFUSED, RIGHT, gap, 5.0) for gap in (0.5, 1.5)] * 10
    legal += [Judged(False, REFUSED, RIGHT, 3.0, 5.0)] * 9
    illegal = [Judged(True, RIGHT, WRONG, gap, 5.0) for gap in (7.0, 9.0)]
    illegal_margin, *_ = choose_margins(legal + illegal)
    between = [m for m in ILLEGAL_MARGINS if 3.0 <= m < 7.0]
    assert len(between) >= 2 and illegal_margin == between[(len(between) - 1) // 2]
    # an illegal placement that looks like a misread legal move: letting it stand costs
    # WRONG_COST (10), refusing the nine legal moves less sure than it costs nine: flagged
    doubtful = [Judged(True, RIGHT, WRONG, 2.9, 5.0)]
    assert choose_margins(legal + illegal + doubtful)[0] < 2.9
    # ... and two more such legal moves tip it the other way
    assert choose_margins(legal + legal[-2:] + illegal + doubtful)[0] >= 3.0


def test_a_model_file_without_an_ask_margin_asks_about_no_illegal_act(tmp_path, monkeypatch):
    import vision.models
    from vision.decode import ask_margin, illegal_margin
    from vision.model import model_for

    game, _ = _game_after(4)
    seen = _lone_square(game)
    obs = Observation("blokus", seen, probabilities=_probabilities(seen, sure=0.7))
    gap = math.log(0.7 / 0.15)  # the lone square against no change

    def margins(ask: float | None):
        def edit(meta: dict) -> dict:
            decode = {k: v for k, v in meta["decode"].items() if k != "ask_margin"}
            decode["illegal_margin"] = round(math.log(50), 4)
            if ask is not None:
                decode["ask_margin"] = ask
            return {**meta, "decode": decode}

        return edit

    # a model file whose ask margin is below the gap asks about the lone square
    models = edited_models(tmp_path / "asking", "blokus", margins(0.0))
    monkeypatch.setattr(vision.models, "_chosen", models)
    assert ask_margin("blokus") < gap <= illegal_margin("blokus")
    assert decode(game, obs).doubt is not None

    models = edited_models(tmp_path / "models", "blokus", margins(None))
    monkeypatch.setattr(vision.models, "_chosen", models)
    assert "ask_margin" not in model_for("blokus").meta["decode"]
    assert ask_margin("blokus") == illegal_margin("blokus")  # the band is empty
    decoded = decode(game, obs)
    assert decoded.doubt is None and not decoded.as_seen and decoded.move is None


def test_the_fit_asks_about_an_illegal_placement_when_letting_it_stand_costs_more():
    from vision.decode import WRONG_COST
    from vision.train.decode import REFUSED, RIGHT, WRONG, Judged, choose_margins

    # legal moves read surely (no illegal act near), and ten misread ones whose likeliest
    # illegal act is 0.5 nats likelier than the move (flagging them would refuse them)
    legal = [Judged(False, RIGHT, RIGHT, -9.0, 5.0)] * 50
    legal += [Judged(False, REFUSED, RIGHT, 0.5, 5.0)] * int(WRONG_COST)
    # an illegal placement seen 1 nat likelier than no change: let stand, it costs WRONG_COST
    placement = [Judged(True, RIGHT, WRONG, 1.0, 5.0)]
    illegal_margin, _, ask_margin = choose_margins(legal + placement)
    assert 0.5 <= ask_margin < 1.0 <= illegal_margin  # asked about: one question
    # legal moves as doubtful as the placement: asking costs more than letting it stand
    doubtful = [Judged(False, REFUSED, RIGHT, 0.8, 5.0)] * int(WRONG_COST)
    illegal_margin, _, ask_margin = choose_margins(legal + doubtful + placement)
    assert ask_margin == illegal_margin  # never asked
    assert choose_margins(legal)[2] == choose_margins(legal)[0]


def test_the_three_margins_are_fitted_again_on_a_kept_network(tmp_path):
    import json
    import shutil

    from vision.model import CellModel, model_for
    from vision.train.cli import recipes
    from vision.train.decode import ASK_MARGINS, ILLEGAL_MARGINS, MARGINS
    from vision.train.fit import refit_decode

    model = model_for("gobsmacked")
    for suffix in (".json", ".onnx"):
        shutil.copy(model.meta_path.with_suffix(suffix), tmp_path / f"gobsmacked{suffix}")
    recipe = recipes()["gobsmacked"]
    with pytest.raises(ValueError, match="decode_close"):  # before a game is filmed
        refit_decode("gobsmacked", {**recipe, "decode_close": "widest"}, tmp_path, 4, 1)
    path = refit_decode("gobsmacked", recipe, tmp_path, 4, 1, games=1)
    meta = json.loads(path.read_text())
    fitted, trained = meta["decode"], meta["trained"]
    assert fitted["illegal_margin"] in ILLEGAL_MARGINS and fitted["close_margin"] in MARGINS
    assert fitted["ask_margin"] in ASK_MARGINS and fitted["ask_margin"] <= fitted["illegal_margin"]
    assert trained["decode_games"] == 1 and trained["decode_illegal"] <= 1
    verdicts = trained["decode_right"] + trained["decode_wrong"] + trained["decode_refused"]
    assert verdicts == trained["decode_moves"] > 0
    assert trained["decode_illegal_asked"] <= trained["decode_illegal"]
    assert CellModel.load(path).onnx == model.onnx  # the network is kept


def test_the_illegal_margin_comes_from_the_model_file_and_the_gap_is_reported():
    from vision.decode import ILLEGAL_MARGIN, illegal_margin
    from vision.model import model_for

    for name in ("gobsmacked", "gobblet", "blokus", "blokus-duo", "spectrangle"):
        fitted = model_for(name).meta.get("decode", {})
        assert illegal_margin(name) == fitted.get("illegal_margin", ILLEGAL_MARGIN)
    game, _ = _game_after(4)
    view = game.view()
    seen = _lone_square(game)
    probs = _probabilities(seen, sure=0.9)
    obs = Observation("blokus", seen, probabilities=probs)
    gap = decode(game, obs, illegal_beyond=math.inf).illegal_gap
    # the best legal explanation (no change) leaves the square's 0.9 / 0.05 unexplained
    assert gap == pytest.approx(math.log(0.9 / 0.05))
    assert decode(game, obs, illegal_beyond=gap - 0.01).as_seen
    below = decode(game, obs, illegal_beyond=gap + 0.01)
    assert not below.as_seen and below.observation.cells == view


def test_an_illegal_act_within_the_illegal_margin_but_beyond_the_ask_margin_is_asked_about():
    from vision.decode import ask_margin, illegal_margin
    from vision.model import model_for

    for name in ("gobsmacked", "gobblet", "blokus", "blokus-duo", "spectrangle"):
        fitted = model_for(name).meta.get("decode", {})
        assert ask_margin(name) == fitted.get("ask_margin", illegal_margin(name))
        assert ask_margin(name) <= illegal_margin(name)
    game, _ = _game_after(4)
    view = game.view()
    seen = _lone_square(game)
    obs = Observation("blokus", seen, probabilities=_probabilities(seen, sure=0.9))
    gap = math.log(0.9 / 0.05)  # the lone square against no change, the best legal explanation
    asked = decode(game, obs, illegal_beyond=gap + 0.01, ask_beyond=gap - 0.01)
    # judged as no change, with the placement put to the players as an observation to judge
    assert not asked.as_seen and asked.move is None and asked.observation.cells == view
    assert asked.doubt is not None and asked.doubt.cells == seen
    assert game.infer(asked.doubt).kind == ILLEGAL
    assert decode(game, obs, illegal_beyond=gap + 0.01, ask_beyond=gap + 0.01).doubt is None
    reported = decode(game, obs, illegal_beyond=gap - 0.01, ask_beyond=gap - 0.02)
    assert reported.as_seen and reported.doubt is None
    # a board read surely as the accepted one has nothing to ask about
    quiet = Observation("blokus", dict(view), probabilities=_probabilities(view, sure=0.999))
    assert decode(game, quiet, ask_beyond=-math.inf).doubt is None


def test_a_reported_placement_names_the_likeliest_legal_move():
    game, _ = _game_after(4)
    a = next(m for m in game.legal_moves() if len(m.cells()) == 5)
    # a's piece seen surely on squares the rules forbid, a's own squares 60:40 for the piece
    placed = forbidden_squares(game, a)
    seen = {**game.view(), **dict.fromkeys(placed, game.to_move)}
    overrides = {c: {game.to_move: 0.6, None: 0.4} for c in a.cells()}
    probs = _probabilities(seen, sure=0.999, overrides=overrides)
    decoded = decode(game, Observation("blokus", seen, probabilities=probs))
    assert decoded.as_seen and decoded.move is None
    assert decoded.nearest == a  # the move whose squares were seen, doubtfully
    assert decoded.observation.cells == seen  # the placement, and a's squares as they were
    assert game.infer(decoded.observation).kind == ILLEGAL
    # a piece seen far from any legal place: no change is the likeliest legal explanation
    far = _lone_square(game)
    lone = decode(
        game, Observation("blokus", far, probabilities=_probabilities(far, 0.999)), None, 0.0
    )
    assert lone.as_seen and lone.nearest is None


def test_a_cell_the_move_left_alone_read_wrongly_does_not_make_the_move_illegal():
    game, _ = _game_after(4)
    a = next(m for m in game.legal_moves() if len(m.cells()) == 5)
    seen = {**game.view(), **game.changes_after(a)}
    other = "violet" if game.to_move == "orange" else "orange"
    # an empty square far from the new piece is read surely as the other colour
    far = next(c for c, v in game.view().items() if v is None and c not in _near(a.cells()))
    seen[far] = other
    probs = _probabilities(seen, sure=0.999)
    obs = Observation("blokus", seen, probabilities=probs)
    assert game.infer(obs).kind != MOVE  # the board as read is no move
    decoded = decode(game, obs, illegal_beyond=0.0)  # however small the margin
    assert decoded.move == a and not decoded.as_seen
    assert decoded.observation.cells[far] is None  # the square keeps its accepted content


def _near(cells):
    out = set()
    for x, y in map(parse_square, cells):
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if x + dx >= 0 and y + dy >= 0:
                    out.add(square_name(x + dx, y + dy))
    return out


def test_a_piece_put_down_out_of_turn_is_flagged():
    game, _ = _game_after(4)
    a = next(m for m in game.legal_moves() if len(m.cells()) == 5)
    other = "violet" if game.to_move == "orange" else "orange"
    seen = {**game.view(), **dict.fromkeys(a.cells(), other)}
    probs = _probabilities(seen, sure=0.999)
    decoded = decode(game, Observation("blokus", seen, probabilities=probs))
    assert decoded.as_seen and decoded.observation.cells == seen
    assert game.infer(decoded.observation).kind == ILLEGAL


def test_anything_put_down_once_the_game_is_over_is_flagged():
    game = new_game("gobblet")
    rng = random.Random(3)
    while not game.is_over:
        action = game.random_move(rng)
        game.handle(action) if isinstance(action, Event) else game.play(action)
    view = game.view()
    empty = next((c for c, v in view.items() if v is None), None)
    target = empty or next(iter(view))
    piece = next(iter(c for c in view.values() if c is not None))
    seen = {**view, target: piece._replace(size=4)}
    classes = {None, *(c for c in seen.values())}
    probs = {
        c: {k: (0.999 if k == v else 0.001 / len(classes)) for k in classes}
        for c, v in seen.items()
    }
    decoded = decode(game, Observation("gobblet", seen, probabilities=probs))
    assert decoded.as_seen and decoded.observation.cells[target] == seen[target]
    assert game.infer(decoded.observation).kind == ILLEGAL


def test_a_piece_taken_off_again_is_flagged():
    game, _ = _game_after(4)
    last = game.views()[-2]  # the board before the last piece was put down
    probs = _probabilities(last, sure=0.999)
    decoded = decode(game, Observation("blokus", last, probabilities=probs))
    assert decoded.as_seen and decoded.observation.cells == last
    assert game.infer(decoded.observation).kind == AMBIGUOUS  # "check the board"


def test_while_the_first_piece_decides_who_starts_either_player_may_have_opened():
    # the first piece read as the other player's, 60 % against 40 % for the player to move's
    # colour: it is decoded as that player's opening, a legal explanation the referee accepts
    referee = Referee("blokus")
    game = referee.game
    assert game.first_is_open
    other = next(p for p in game.players if p != game.to_move)
    trial = game.copy()
    trial.open_with(other)
    move = next(iter(trial.legal_moves()))
    changed = trial.changes_after(move)
    overrides = {c: {other: 0.6, game.to_move: 0.4, None: 0.0} for c in changed}
    probs = _probabilities(game.view(), overrides=overrides)
    argmax = {c: max(p, key=p.get) for c, p in probs.items()}
    decoded = decode(game, Observation("blokus", argmax, probabilities=probs))
    assert decoded.move == Opening(other, move, tuple(changed.items()))
    assert str(decoded.move) == f"{other} {move}" and not decoded.as_seen
    outcome = referee.judge(decoded.observation)
    assert outcome.verdict.kind == MOVE and outcome.mover == other
    assert game.history == (move,) and not opening_changes(game)  # decided: no opening left
