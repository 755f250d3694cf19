"""Calibrating to the table (vision.adapt): the bank's bounds, the table's temperature, the
reader's use of them, the fit of their parameters and the games it is fitted and benchmarked
on."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

import vision.models
from engine import new_game
from vision import bench_table
from vision.adapt import Adaptation, TableBank, TableTemperature, tempered_log_probs
from vision.model import OUTPUTS, model_for, softmax
from vision.readers import reader_for
from vision.synth import Domain, random_game, render_scene
from vision.train.adapt import Step, Table, choose_adaptation, prototypes, replay

from .data.models import flagging_models
from .reader_corpus import locate

ON = Adaptation(weight=2.0, reach=4.0, capacity=5, min_examples=2)


def _bank(adaptation: Adaptation = ON) -> TableBank:
    bank = TableBank(3, adaptation)
    rng = np.random.default_rng(0)
    bank.add(rng.normal([0, 0], 0.1, (4, 2)), np.zeros(4, dtype=int))
    bank.add(rng.normal([5, 0], 0.1, (4, 2)), np.ones(4, dtype=int))
    return bank


def test_the_bank_raises_only_classes_a_target_is_close_to_and_never_beyond_its_bound():
    bank = _bank()
    assert bank.active and bank.counts() == [4, 4, 0]
    rng = np.random.default_rng(1)
    probe = np.vstack([[0, 0], [5, 0], [2.5, 0], [0, 40], rng.normal(0, 10, (200, 2))])
    off = bank.offsets(probe)
    assert off.shape == (len(probe), 3)
    assert (off >= 0).all() and (off <= ON.bound + 1e-9).all()
    assert off[0, 0] > 0 and off[0, 1] == 0  # at class 0's mean: class 0 only
    assert off[1, 1] > 0 and off[1, 0] == 0
    assert (off[:, 2] == 0).all()  # a class the table never showed is left to the model
    assert (off[3] == 0).all()  # far from everything (a hand): no change at all


def test_the_bank_is_bounded_in_examples_and_off_when_it_should_be():
    bank = TableBank(2, ON)
    bank.add(np.arange(20.0).reshape(10, 2), np.zeros(10, dtype=int))
    kept = np.array(bank._examples[0])
    # one call with more than the capacity keeps evenly spaced examples, the ends included
    assert len(kept) == ON.capacity and kept[0, 0] == 0 and kept[-1, 0] == 18
    bank.add(np.full((3, 2), 99.0), np.zeros(3, dtype=int))
    assert len(bank._examples[0]) == ON.capacity and bank._examples[0][-1][0] == 99
    # a single example of a class is not used; weight 0 is no adaptation at all
    lone = TableBank(2, ON)
    lone.add(np.zeros((1, 2)), np.zeros(1, dtype=int))
    assert not lone.active and not lone.offsets(np.zeros((2, 2))).any()
    assert not _bank(replace(ON, weight=0.0)).offsets(np.zeros((2, 2))).any()
    bank.clear()
    assert bank.counts() == [0, 0] and not bank.active


def test_a_class_the_table_has_not_shown_is_looked_for_about_its_prototype():
    # classes 0 and 1 shown about (0, 0) and (5, 0), their prototypes 1 up and 1 right of that:
    # the table's shift is (-1, -1), so class 2, prototype (11, 1), is looked for about (10, 0);
    # class 3 (a hand's: no prototype) is left to the model
    lending = replace(ON, lend=0.5, prototypes=((1.0, 1.0), (6.0, 1.0), (11.0, 1.0), ()))
    bank = TableBank(4, lending)
    rng = np.random.default_rng(3)
    bank.add(rng.normal([0, 0], 0.1, (4, 2)), np.zeros(4, dtype=int))
    bank.add(rng.normal([5, 0], 0.1, (4, 2)), np.ones(4, dtype=int))
    off = bank.offsets(np.array([[10.0, 0.0], [11.0, 1.0], [0.0, 0.0], [0.0, 40.0]]))
    assert off[0, 2] == pytest.approx(0.5 * ON.bound, rel=0.05) and off[0, :2].max() == 0
    assert off[1, 2] < off[0, 2]  # about the prototype moved by the shift, not the prototype
    assert off[2, 0] > 0 and off[2, 2] == 0
    assert (off[:, 3] == 0).all() and (off[3] == 0).all()  # no prototype; far from everything
    held = TableBank(4, replace(lending, lend=0.0))  # lend off: the bank as before
    held.add(rng.normal([0, 0], 0.1, (4, 2)), np.zeros(4, dtype=int))
    assert (held.offsets(np.array([[10.0, 0.0]])) == 0).all()
    assert Adaptation.from_json(lending.to_json()) == lending


def test_the_adaptation_round_trips_and_is_off_when_a_model_file_has_none():
    assert Adaptation.from_json(ON.to_json()) == ON
    taught = replace(ON, misreads=True)
    assert Adaptation.from_json(taught.to_json()) == taught
    assert Adaptation.from_json(None).bound == 0
    older = {k: v for k, v in taught.to_json().items() if k != "misreads"}  # before the field
    assert Adaptation.from_json(older) == ON
    tempered = replace(ON, temper=3.0)
    assert Adaptation.from_json(tempered.to_json()) == tempered
    assert Adaptation.from_json({**tempered.to_json(), "temper": None}).temper is None
    for game in ("gobsmacked", "spectrangle", "gobblet", "blokus"):
        model = model_for(game)
        assert Adaptation.from_json(model.meta["adapt"]) == model.adaptation
        assert model.adaptation.capacity >= model.adaptation.min_examples >= 1


@pytest.mark.parametrize("game", ["gobblet", "spectrangle"])
def test_the_network_gives_logits_and_the_embedding_they_come_from(game):
    model = model_for(game)
    assert OUTPUTS == ("logits", "embedding")
    patches = np.random.default_rng(2).random((7, *model_patch_shape(model)), dtype=np.float32)
    logits, embedding = model.forward(patches)
    assert logits.shape == (7, len(model.classes)) and embedding.shape[0] == 7
    assert (embedding >= 0).all() and embedding.shape[1] > len(model.classes)  # a ReLU layer
    assert np.allclose(model.predict_proba(patches), softmax(logits))


def model_patch_shape(model) -> tuple[int, int, int]:
    spec = model.spec
    return (3 * len(spec.heights_mm), spec.px, spec.px)


def test_accepted_positions_teach_the_reader_and_a_new_game_forgets():
    game = "gobblet"
    model = model_for(game)
    reader = reader_for(game, model=replace(model, adaptation=ON))
    codec = new_game(game)
    boards = random_game(game, 5, 3)
    shots = [render_scene(game, b, 12, hand=False, domain=Domain.TRAIN).image for b in boards]
    known = [{n: codec.cell_from_json(v) for n, v in b.items()} for b in boards]
    reader.calibrate(shots[0], locate(game, shots[0]), known[0])
    empty = model.classes.index("empty")
    assert reader.bank.counts()[empty] == ON.capacity  # the opening: all empty, evenly kept
    assert sum(reader.bank.counts()) == ON.capacity
    reader.calibrate(shots[1], locate(game, shots[1]), known[1])
    assert sum(reader.bank.counts()) == ON.capacity + 1  # the one piece the move put down
    # the bank's offsets reach the changed targets' probabilities: with the memory gone, every
    # target is judged again, and the pieces the table showed are more certain than the
    # model alone makes them
    plain = reader_for(game, model=replace(model, adaptation=Adaptation()))
    pose = locate(game, shots[1])
    reader.memory = None
    adapted, alone = reader.predict(shots[1], pose), plain.predict(shots[1], pose)
    truth = [
        model.classes.index(reader.label(codec.cell_to_json(known[1][t.cell]), t.part))
        for t in reader.sampler.targets
    ]
    rows = np.arange(len(truth))
    assert (adapted[rows, truth] >= alone[rows, truth] - 1e-9).all()
    assert (adapted[rows, truth] > alone[rows, truth] + 1e-6).any()
    reader.forget()
    assert sum(reader.bank.counts()) == 0 and reader.memory is None
    # a model whose adaptation is off learns nothing
    plain.calibrate(shots[0], locate(game, shots[0]), known[0])
    assert sum(plain.bank.counts()) == 0


def test_a_table_temperature_only_ever_softens_and_leaves_the_foreign_class_alone():
    rng = np.random.default_rng(4)
    logits = rng.normal(0.0, 3.0, (50, 4))
    foreign = 3
    plain = softmax(logits)
    assert np.allclose(np.exp(tempered_log_probs(logits, foreign, 1.0)), plain)
    plain_others = np.delete(plain, foreign, axis=1)
    for t in (1.5, 4.0):
        p = np.exp(tempered_log_probs(logits, foreign, t))
        assert np.allclose(p.sum(axis=1), 1.0)
        assert np.allclose(p[:, foreign], plain[:, foreign])  # a hand is flagged as before
        others = np.delete(p, foreign, axis=1)
        assert (others.argmax(axis=1) == plain_others.argmax(axis=1)).all()
        assert (others.max(axis=1) <= plain_others.max(axis=1) + 1e-12).all()
        assert (others.max(axis=1) < plain_others.max(axis=1) - 1e-6).any()


def test_a_table_whose_accepted_moves_contradict_its_reads_is_read_less_surely():
    foreign = 2
    truth = np.zeros(5, dtype=int)
    sure_wrong = np.array([[0.0, 6.0, -9.0]] * 5)  # read as class 1 by 6 nats; it was a 0
    off = TableTemperature(foreign, None)
    off.observe(sure_wrong, truth)
    assert off.value == 1.0  # a model file without a temperature reads as its model does...
    assert off.contradicted  # ... and still says that the moves contradict its reads
    loose, held = TableTemperature(foreign, 0.0), TableTemperature(foreign, 100.0)
    assert loose.value == held.value == 1.0  # nothing shown yet
    loose.observe(sure_wrong, truth)
    held.observe(sure_wrong, truth)
    assert loose.value > 2.0
    assert 1.0 < held.value < loose.value  # the prior holds it nearer 1
    right = TableTemperature(foreign, 0.0)
    right.observe(np.array([[6.0, 0.0, -9.0]] * 5), truth)
    assert right.value == 1.0 and not right.contradicted  # never surer than the model
    once = TableTemperature(foreign, 0.0)
    once.observe(np.array([[0.0, 2.0, -9.0]]), truth[:1])
    assert not once.contradicted  # one misread by 2 nats is within chance
    hands = TableTemperature(foreign, 0.0)
    hands.observe(sure_wrong, np.full(5, foreign))
    assert hands.value == 1.0  # foreign targets say nothing of the pieces
    loose.clear()
    assert loose.value == 1.0 and not loose.contradicted


def test_the_reader_reads_at_the_temperature_its_accepted_moves_give_it():
    game = "gobblet"
    model = model_for(game)
    tempered = reader_for(game, model=replace(model, adaptation=replace(ON, temper=0.0)))
    plain = reader_for(game, model=replace(model, adaptation=ON))
    codec = new_game(game)
    boards = random_game(game, 5, 3)
    shots = [render_scene(game, b, 12, hand=False, domain=Domain.TRAIN).image for b in boards]
    known = [{n: codec.cell_from_json(v) for n, v in b.items()} for b in boards]
    for reader in (tempered, plain):
        for shot, k in zip(shots[:2], known[:2], strict=True):
            reader.calibrate(shot, locate(game, shot), k)
    assert tempered.temperature._loss.any()  # the second board's new piece was shown to it
    assert plain.temperature._loss.any() and plain.temperature.value == 1.0  # no temper
    assert tempered.temperature.value >= 1.0
    # a table whose moves contradicted its reads: the same frame read less surely
    sure_wrong = np.zeros((20, len(model.classes)))
    sure_wrong[:, model.classes.index("white-1")] = 8.0
    tempered.temperature.observe(sure_wrong, np.full(20, model.classes.index("empty")))
    assert tempered.temperature.value > 2
    pose = locate(game, shots[2])
    hot, cool = (
        tempered.predict(shots[2], pose, afresh=True),
        plain.predict(shots[2], pose, afresh=True),
    )
    f = model.foreign
    assert np.allclose(hot[:, f], cool[:, f])
    assert (np.delete(hot, f, 1).max(axis=1) <= np.delete(cool, f, 1).max(axis=1) + 1e-9).all()
    assert (np.delete(hot, f, 1).max(axis=1) < np.delete(cool, f, 1).max(axis=1) - 1e-3).any()
    tempered.forget()
    assert tempered.temperature.value == 1.0


def test_the_table_learns_from_what_the_model_misread_there():
    """A target sent to the model again and read as something it is not (cells under a hand,
    accepted as the empty squares they still are) becomes an example of its accepted class."""
    game = "gobblet"
    model = model_for(game)
    taught = replace(ON, capacity=64, misreads=True)
    reader = reader_for(game, model=replace(model, adaptation=taught))
    changed_only = reader_for(game, model=replace(model, adaptation=replace(ON, capacity=64)))
    codec = new_game(game)
    opening = random_game(game, 5, 1)[0]
    known = {n: codec.cell_from_json(v) for n, v in opening.items()}
    clear = render_scene(game, opening, 12, hand=False, domain=Domain.TRAIN).image
    covered = render_scene(game, opening, 12, hand=True, domain=Domain.TRAIN).image
    empty = model.classes.index("empty")
    cells = len(reader.sampler.targets)
    pose = locate(game, covered)
    for r in (reader, changed_only):
        r.calibrate(clear, locate(game, clear), known)
        assert r.bank.counts()[empty] == cells
    wrong = int(np.sum(reader.predict(covered, pose).argmax(axis=1) != empty))
    assert wrong > 0  # the hand is read as what it is, not as the empty board under it
    reader.calibrate(covered, pose, known)
    assert reader.bank.counts()[empty] == cells + wrong
    assert sum(reader.bank.counts()) == cells + wrong  # taught as empty, never as foreign
    changed_only.calibrate(covered, pose, known)  # no class changed: nothing taught
    assert sum(changed_only.bank.counts()) == cells


def _table(wrong_logits: bool, changed: bool = True, taught_class: int = 0) -> Table:
    """Three boards: the model's logits favour class 1 where the truth is 0, and the targets'
    embeddings sit right on the examples the table taught (``changed``: the targets' class
    changed and taught them, as ``taught_class``; otherwise nothing else is taught)."""
    logits = np.array([[0.0, 1.0, -5.0]] * 3) if wrong_logits else np.array([[3.0, 0, -5]] * 3)
    return _steps(logits, np.zeros(3, dtype=int), changed, taught_class)


def _steps(logits: np.ndarray, truth: np.ndarray, changed: bool, taught_class: int) -> Table:
    """Three boards of targets with ``logits`` and ``truth``, their embeddings all on the four
    examples of ``taught_class`` each board teaches (none if not ``changed``)."""
    taught = np.zeros((4 if changed else 0, 2))
    step = Step(
        logits,
        np.zeros((len(logits), 2)),
        truth,
        np.full(len(logits), changed),
        taught,
        np.full(len(taught), taught_class),
    )
    return Table("gobblet", [step, step, step])


def test_the_fit_keeps_the_adaptation_that_gives_the_targets_the_least_log_loss():
    helped = [_table(True)]
    assert replay(helped, 3, Adaptation()).right == 0
    assert replay(helped, 3, ON).right == 6  # the first board has no examples yet
    choice = choose_adaptation(helped, 3)
    assert choice.adaptation.bound > 0 and choice.chosen.right == 6
    assert (choice.without.right, choice.chosen.total) == (0, 9)
    assert choice.chosen.mean_loss < choice.without.mean_loss
    # a table whose bank would raise the wrong class: no adaptation is the choice
    misled = choose_adaptation([_table(False, taught_class=1)], 3)
    assert misled.adaptation.weight == 0 and misled.chosen.right == 9


def test_the_fit_sizes_a_raise_by_the_confidence_it_gives_both_ways():
    # two targets look alike to the table (both sit on class 0's examples): the first is a 0
    # the model reads as 1 by 0.2 nats, the second a 1 it reads right by 3 nats. Counting reads
    # right, any raise of class 0 between 0.2 and 3 nats is as good (and the smallest would be
    # kept); the log-loss keeps one near the middle, that leaves both reads a margin
    logits = np.array([[0.0, 0.2, -5.0], [0.0, 3.0, -5.0]])
    choice = choose_adaptation([_steps(logits, np.array([0, 1]), True, 0)], 3)
    assert 1 < choice.adaptation.bound < 3
    assert choice.chosen.right == 5  # the first board has no examples yet


def test_the_fit_reads_a_table_its_moves_contradict_at_a_temperature():
    # every board, two of three targets whose class changed are 0s the model reads as 1s, sure
    # by 4 nats; the bank cannot help (it is taught the foreign class only). From the second
    # board on, the table's temperature softens those reads: a lower log-loss, the same reads
    logits = np.array([[0.0, 4.0, -9.0], [0.0, 4.0, -9.0], [4.0, 0.0, -9.0]])
    table = _steps(logits, np.zeros(3, dtype=int), True, 2)
    choice = choose_adaptation([table], 3, foreign=2)
    assert choice.adaptation.weight == 0 and choice.adaptation.temper is not None
    assert choice.chosen.mean_loss < choice.untempered.mean_loss
    assert choice.chosen.right == choice.untempered.right == 3
    with pytest.raises(ValueError):
        replay([table], 3, replace(ON, temper=0.0))  # a temperature needs the foreign column
    # reads the moves bear out: no temperature (every prior ties with none)
    right = _steps(np.array([[4.0, 0.0, -9.0]] * 3), np.zeros(3, dtype=int), True, 2)
    assert choose_adaptation([right], 3, foreign=2).adaptation.temper is None
    assert choose_adaptation([table], 3).adaptation.temper is None  # no foreign column given


def test_the_one_se_rule_frees_the_temperature_only_where_the_games_cannot_tell():
    # reads the moves bear out: every prior ties with none; the least keeps none, the rule the
    # weakest prior (a temperature that may rise as freely as the table's boards say)
    right = [_steps(np.array([[4.0, 0.0, -9.0]] * 3), np.zeros(3, dtype=int), True, 2)] * 4
    assert choose_adaptation(right, 3, foreign=2).adaptation.temper is None
    freed = choose_adaptation(right, 3, foreign=2, temper_rule="one_se")
    assert (freed.adaptation.temper, freed.least_temper) == (0.0, None)
    assert freed.chosen.loss == freed.untempered.loss
    # one changed target misread surely each board, twenty unchanged read right by 2 nats: a
    # temperature that rises for the one softens the twenty, at a cost every game shows alike
    logits = np.array([[0.0, 4.0, -9.0]] + [[2.0, 0.0, -9.0]] * 20)
    changed = np.array([True] + [False] * 20)
    step = Step(
        logits,
        np.zeros((21, 2)),
        np.zeros(21, dtype=int),
        changed,
        np.zeros((0, 2)),
        np.zeros(0, dtype=int),
    )
    costly = [Table("gobblet", [step, step, step])] * 4
    least = choose_adaptation(costly, 3, foreign=2)
    assert least.adaptation.temper is None
    kept = choose_adaptation(costly, 3, foreign=2, temper_rule="one_se")
    # freed no further than a prior so strong that it ties with none: no weaker one
    assert kept.adaptation.temper not in (None, 0.0, 1.0)
    assert kept.chosen.loss == pytest.approx(least.chosen.loss)
    assert replay(costly, 3, replace(Adaptation(), temper=0.0), 2).loss > least.chosen.loss
    with pytest.raises(ValueError, match="adapt_temper"):
        choose_adaptation(right, 3, foreign=2, temper_rule="safest")


def test_the_fit_replays_what_the_table_learns_from_its_misreads():
    # nothing changed class, so only the first board's misreads teach the bank, as calibrate
    misread = [_table(True, changed=False)]
    assert replay(misread, 3, Adaptation()).right == 0
    assert replay(misread, 3, ON).right == 0  # taught only by changes: nothing to learn from
    assert replay(misread, 3, replace(ON, misreads=True)).right == 6
    choice = choose_adaptation(misread, 3)
    assert choice.adaptation.misreads and choice.adaptation.bound > 0
    assert (choice.chosen.right, choice.without.right, choice.other.right) == (6, 0, 0)
    # where changes teach as much, the fit keeps to them (ties: no misreads)
    choice = choose_adaptation([_table(True)], 3)
    assert not choice.adaptation.misreads and choice.chosen.right == choice.other.right == 6


def _teaching(classes: list[tuple[int, float]], targets: np.ndarray, logits: list) -> Table:
    """Three boards, each teaching four examples about (x, 0) of each (class, x) of ``classes``,
    with targets at ``targets`` (embeddings) read with ``logits``, their truth class 2."""
    rng = np.random.default_rng(len(classes))
    taught = np.vstack([rng.normal([x, 0.0], 0.1, (4, 2)) for _, x in classes])
    labels = np.repeat([c for c, _ in classes], 4)
    step = Step(
        np.array(logits),
        targets,
        np.full(len(targets), 2),
        np.ones(len(targets), dtype=bool),
        taught,
        labels,
    )
    return Table("gobblet", [step, step, step])


def test_the_fit_lends_a_class_where_another_game_showed_it():
    # game A shows class 2 about (5, 0); at game B, which never shows it, class 2 is put down
    # there and read as class 1 by 0.2 nats: B's bank can only be helped by A's prototype
    shown = _teaching([(0, 0.0), (2, 5.0)], np.array([[5.0, 0.0]]), [[-5.0, 0.0, 3.0]])
    first = _teaching([(0, 0.0)], np.array([[5.0, 0.0]]), [[-5.0, 0.2, 0.0]])
    every, others = prototypes([shown, first], 3)
    assert others[1][2] == pytest.approx(every[2], abs=0.1) and every[1] == () == others[0][2]
    choice = choose_adaptation([shown, first], 3)
    assert choice.adaptation.lend > 0 and choice.adaptation.prototypes == every
    assert choice.chosen.right == 3 + 2  # B's first board has no examples yet
    kept = replace(choice.adaptation, lend=0.0)  # B's bank never holds class 2
    assert replay([shown, first], 3, kept).right == 3


@pytest.mark.parametrize("game", ["gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo"])
def test_sample_games_are_legal_and_put_one_move_down_at_a_time(game):
    boards = random_game(game, 7, 6)
    assert 2 <= len(boards) <= 7 and all(v is None for v in boards[0].values())
    play = new_game(game)
    for before, after in pairwise(boards):
        assert before != after
        obs = play.observation_from_json({"game": game, "cells": after})
        verdict = play.infer(obs)
        assert verdict.kind == "move", (game, verdict)
        play.play(verdict.move)
    assert random_game(game, 7, 6) == boards  # seeded


def test_the_table_bench_reads_whole_games_with_and_without_adapting(monkeypatch, capsys):
    from firmware.cli import main

    monkeypatch.setattr(bench_table, "MOVES", 3)
    assert (
        main(
            [
                "bench",
                "table",
                "--game",
                "gobsmacked",
                "--tables",
                "1",
                "--splits",
                "corpus,heldout",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    for split in ("games", "heldout"):
        r = out[split]["gobsmacked"]
        assert r["tables"] == 1 and r["boards"] == 4 and r["changed_cells"] >= 3
        for key in ("boards_right", "changed_right", "boards_right_without_adapt"):
            assert 0 <= r[key] <= 1
        assert r["moves"] == 3 and r["moves_wrong"] + r["moves_refused"] <= 3
        assert r["moves_right"] == pytest.approx(1 - (r["moves_wrong"] + r["moves_refused"]) / 3)
        assert 0 <= r["flagged_moves_right"] <= r["flagged_moves"] <= r["moves"]
    nominal = out["games"]["gobsmacked"]
    assert nominal["boards_right"] == nominal["moves_right"] == 1.0  # the nominal look: all right
    assert nominal["flagged_moves"] == 0


def test_the_table_bench_judges_a_clear_board_found_occluded_as_the_players_ok_would(
    tmp_path, monkeypatch
):
    # a model that finds something over every board: every move waits for the players' OK
    monkeypatch.setattr(vision.models, "_chosen", flagging_models(tmp_path / "m", "gobsmacked"))
    monkeypatch.setattr(bench_table, "MOVES", 3)
    r = bench_table.bench_table("gobsmacked", 1, 2026, "corpus").to_json()
    assert r["flagged"] == r["boards"] == 4 and r["moves_right"] == 0.0
    # read as clear once the players say so, the nominal look's moves are all judged right
    assert r["flagged_moves"] == r["flagged_moves_right"] == r["moves"] == 3


def test_a_network_without_an_embedding_is_given_one():
    onnx = pytest.importorskip("onnx")
    from vision.train.fit import with_embedding

    model = model_for("blokus")
    assert with_embedding(model.onnx) == model.onnx  # it has one already
    old = onnx.load_from_string(model.onnx)  # as format 1 wrote it: logits only
    old.graph.output.remove(next(o for o in old.graph.output if o.name == "embedding"))
    for node in old.graph.node:  # the last hidden layer keeps its node, under another name
        for names in (node.input, node.output):
            names[:] = ["hidden" if name == "embedding" else name for name in names]
    assert [o.name for o in old.graph.output] == ["logits"]
    new = with_embedding(old.SerializeToString())
    patches = np.random.default_rng(3).random((5, *model_patch_shape(model)), dtype=np.float32)
    given = replace(model, onnx=new)  # read as the referee reads it, context and all
    logits, embedding = given.forward(patches)
    want_logits, want_embedding = model.forward(patches)
    assert np.allclose(logits, want_logits, atol=1e-5)
    assert np.allclose(embedding, want_embedding, atol=1e-5)


def test_fitting_the_adaptation_again_keeps_the_model_file_s_format(tmp_path):
    import shutil

    from vision.model import CellModel
    from vision.train.cli import recipes
    from vision.train.fit import refit_adaptation

    # a file of format 2 (a network without a context, as such files were written)
    source = model_for("gobsmacked")
    assert not source.context
    shutil.copy(source.meta_path.with_suffix(".onnx"), tmp_path / "gobsmacked.onnx")
    meta = {**source.meta, "format": 2}
    (tmp_path / "gobsmacked.json").write_text(json.dumps(meta), encoding="utf-8")
    model = CellModel.load(tmp_path / "gobsmacked.json")
    path = refit_adaptation(
        "gobsmacked", recipes()["gobsmacked"], tmp_path, seed=3, workers=1, games=1
    )
    again = CellModel.load(path)
    assert again.meta["format"] == model.meta["format"] == 2  # no context: not format 3
    assert again.onnx == model.onnx and again.meta["trained"]["adapt_games"] == 1
