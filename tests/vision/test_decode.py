"""Decoding with the rules: a misread cell is resolved by the legal moves, a confidently seen
illegal placement is still flagged, and near ties are reported for the players to confirm."""

import random

from engine import ILLEGAL, MOVE, Observation, new_game
from vision.decode import decode

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
    view = game.view()
    # A monomino-sized blob of the mover's colour far from any of its pieces, seen for sure.
    empty = [c for c, v in view.items() if v is None]
    mover = game.to_move
    target = next(
        c for c in empty if game.infer(Observation("blokus", {**view, c: mover})).kind == ILLEGAL
    )
    seen = {**view, target: mover}
    probs = _probabilities(seen, sure=0.999)
    decoded = decode(game, Observation("blokus", seen, probabilities=probs))
    assert decoded.trusted_argmax
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
    decoded = decode(game, Observation("blokus", argmax, probabilities=probs))
    assert len(decoded.close) >= 2
    assert decoded.margin < 1.0
