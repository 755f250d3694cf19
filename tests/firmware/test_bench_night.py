"""``referee bench night``: scripted games refereed by the real loop, the players pressing only
what its screen asks of them; the figures count what the loop showed at the end of every
board's still frames."""

import json

import numpy as np

import vision.models
from firmware.bench_night import NightTally, night_table
from firmware.cli import main
from firmware.scenario import scripted_game
from firmware.simulator import SimulatedTable
from tests.vision.data.models import edited_models, flagging_models


def _moves(script) -> int:
    return sum(step.expect == "move" for step in script.steps)


def test_a_night_at_the_nominal_table_runs_to_the_end_without_a_press(capsys):
    args = "bench night --game gobsmacked --tables 1 --splits corpus --json"
    code = main(args.split())
    assert code == 0
    r = json.loads(capsys.readouterr().out)["games"]["gobsmacked"]
    assert (r["tables"], r["to_the_end"], r["lost"], r["not_reached"]) == (1, 1, 0, 0)
    assert r["moves"] == r["moves_right"] == r["unaided"] > 10
    assert (r["illegal_placements"], r["illegal_flagged"], r["illegal_let_stand"]) == (1, 1, 0)
    assert r["presses"] == 0 and r["moves_wrong"] == 0
    assert r["frames"] > 16 * r["moves"]


def test_a_night_filmed_with_fresh_noise_in_every_frame_runs_to_the_end(capsys):
    """Every frame with sensor noise of its own, as a camera's: no two frames of a still board
    are alike, and the loop still settles each board once, reads it and needs no press."""
    table = SimulatedTable(scripted_game("blokus-duo", seed=5), seed=5, fresh_noise=True)
    first, second = (table.read()[1].astype(int) for _ in range(2))
    assert 0 < np.abs(first - second).mean() < 4  # the same still board, other noise
    args = "bench night --game blokus-duo --tables 1 --splits corpus --fresh-noise --json"
    assert main(args.split()) == 0
    r = json.loads(capsys.readouterr().out)["games"]["blokus-duo"]
    assert (r["tables"], r["to_the_end"], r["lost"], r["not_reached"]) == (1, 1, 0, 0)
    assert r["moves"] == r["moves_right"] == r["unaided"] > 10
    assert r["presses"] == 0 and r["moves_wrong"] == 0


def test_fresh_noise_is_a_table_and_night_option_only_one_line_and_exit_2(capsys):
    assert main(["bench", "vision", "--fresh-noise"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--fresh-noise is for the table and night" in err


def test_an_unknown_split_is_one_line_and_exit_2(capsys):
    assert main(["bench", "night", "--splits", "kitchen"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown split kitchen" in err


def test_players_say_the_board_is_clear_whenever_the_referee_waits_for_a_hand(
    tmp_path, monkeypatch
):
    # every board the model reads is taken for one with a hand over it
    monkeypatch.setattr(vision.models, "_chosen", flagging_models(tmp_path / "m", "gobsmacked"))
    script = scripted_game("gobsmacked", seed=3)
    script.steps = script.steps[:8]
    tally = NightTally()
    night_table(script, 3, tally)
    r = tally.to_json()
    assert r["to_the_end"] == 1 and r["moves"] == _moves(script) > 0
    assert r["moves_right"] == r["said_clear"] == r["moves"] and r["unaided"] == 0
    assert r["illegal_flagged"] == r["illegal_placements"]
    # the opening, every move, the illegal placement and the board taken back: OK once each
    boards = 1 + sum(not s.is_event for s in script.steps)
    assert tally.presses == {"clear": boards}


def test_players_say_each_move_judged_no_change_was_missed(tmp_path, monkeypatch):
    # a change test blind to every change once a board is accepted: each move is judged "no
    # change" and the players press OK once ("you missed my move"): the board read again, the
    # move is put to them and they answer; said of the illegal placement, the board read again
    # shows it, and it is flagged
    blind = edited_models(tmp_path / "m", "gobsmacked", lambda m: {**m, "change_threshold": 1e9})
    monkeypatch.setattr(vision.models, "_chosen", blind)
    script = scripted_game("gobsmacked", seed=3)
    script.steps = script.steps[:6]
    tally = NightTally()
    night_table(script, 3, tally)
    r = tally.to_json()
    assert r["to_the_end"] == 1 and r["moves"] == _moves(script) > 0
    assert r["moves_right"] == r["said_missed"] == r["moves"] and r["moves_wrong"] == 0
    assert r["illegal_placements"] == r["illegal_flagged"] == 1
    assert tally.presses["missed"] == r["moves"] + 1 and tally.presses["answer"] >= r["moves"]


def _swapped(meta: dict, pairs: list[tuple[str, str]]) -> dict:
    classes = list(meta["classes"])
    for a, b in pairs:
        i, j = classes.index(a), classes.index(b)
        classes[i], classes[j] = classes[j], classes[i]
    return {**meta, "classes": classes}


def _swapped_night(tmp_path, monkeypatch, pairs: list[tuple[str, str]]):
    """A Gobsmacked night read by the committed model with the names of ``pairs`` of its
    classes swapped: its script, its tally and the tally's figures."""
    models = edited_models(tmp_path / "m", "gobsmacked", lambda meta: _swapped(meta, pairs))
    monkeypatch.setattr(vision.models, "_chosen", models)
    script = scripted_game("gobsmacked", seed=3)
    tally = NightTally()
    night_table(script, 3, tally)
    return script, tally, tally.to_json()


def test_a_move_undone_and_read_so_again_is_put_to_the_players_not_accepted_again(
    tmp_path, monkeypatch
):
    # a model that reads every circle as a square and every square as a circle: the first
    # move is read as another legal move and undone by the players; read so again, it is not
    # accepted again but put to them with the other likeliest explanations (here all wrong
    # too: the night is lost, with one wrong move, not two)
    pairs = [("black-circle", "black-square"), ("white-circle", "white-square")]
    script, tally, r = _swapped_night(tmp_path, monkeypatch, pairs)
    assert (r["to_the_end"], r["lost"], r["moves"], r["moves_right"]) == (0, 1, 1, 0)
    assert r["moves_wrong"] == 1 and tally.presses["undo"] == 1
    assert tally.presses["answer"] >= 2  # "neither", page after page
    assert r["not_reached"] == _moves(script) - 1


def test_an_opening_board_read_wrong_loses_the_night_without_a_move_right(tmp_path, monkeypatch):
    # every empty cell read as a black circle: the decoder explains the opening board by the
    # likeliest legal move, which the players undo; read so again, it is put to them, not
    # accepted again, and no later board is read right
    script, tally, r = _swapped_night(tmp_path, monkeypatch, [("empty", "black-circle")])
    assert (r["to_the_end"], r["lost"], r["moves_right"], r["moves_wrong"]) == (0, 1, 0, 1)
    assert tally.presses["undo"] == 1 and tally.presses["answer"] >= 1
    assert r["not_reached"] == _moves(script) - r["moves"]
