"""The ``referee`` command line, run as a user would run it."""

import json
import subprocess
import sys

import cv2
import pytest

from firmware.cli import main
from tests.vision.data.models import edited_models
from vision.synth import Domain, render_scene


def _gobblet(cells):
    board = {f"{f}{r}": None for f in "abcd" for r in range(1, 5)}
    board.update({k: {"color": c, "size": s} for k, (c, s) in cells.items()})
    return {"game": "gobblet", "cells": board}


@pytest.fixture
def gobblet_game(tmp_path):
    lines = [
        {"event": "start", "players": 2, "first": "white"},
        _gobblet({"a1": ("white", 4)}),
        _gobblet({"a1": ("white", 4)}),  # nothing moved
        _gobblet({"a1": ("white", 4), "b1": ("white", 3)}),  # white again: not its turn
        _gobblet({"a1": ("white", 4), "b2": ("black", 4)}),
        "not json at all",
        _gobblet({"a1": ("white", 4), "b2": ("black", 4), "a2": ("white", 4)}),
        {"event": "resign", "player": "black"},
    ]
    path = tmp_path / "game.jsonl"
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
        encoding="utf-8",
    )
    return path


def test_replay_json_answers_every_line_with_the_documented_keys(gobblet_game, capsys):
    assert main(["replay", str(gobblet_game), "--game", "gobblet", "--json"]) == 1  # line 6
    captured = capsys.readouterr()
    assert captured.err == f"referee: 1 line(s) of {gobblet_game} could not be read (line 6)\n"
    out = [json.loads(line) for line in captured.out.splitlines()]
    assert [o["verdict"] for o in out] == [
        "event",
        "move",
        "no-change",
        "illegal",
        "move",
        "ambiguous",
        "move",
        "event",
    ]
    keys = {"verdict", "move", "reason", "scores", "to_move", "over", "winner"}
    assert all(keys <= o.keys() for o in out)
    assert out[1]["move"] == "4@a1" and out[1]["to_move"] == "black"
    assert "black" in out[3]["reason"] and out[3]["to_move"] == "black"
    assert out[5]["reason"].startswith("unreadable") or "JSON" in out[5]["reason"]
    assert out[-1]["over"] is True and out[-1]["winner"] == "white"
    assert set(out[-1]["scores"]) == {"white", "black"}


def test_replay_plain_text_ends_with_the_result(gobblet_game, capsys):
    assert main(["replay", str(gobblet_game), "--game", "gobblet"]) == 1  # "not json at all"
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 9 and lines[-1].startswith("result:") and "winner: white" in lines[-1]
    assert "ILLEGAL" in lines[3]


def test_replay_of_a_missing_file_fails_cleanly(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl"), "--game", "blokus"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_games_lists_every_game(capsys):
    assert main(["games"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == ["gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo"]


def test_bench_engine_json_shape(capsys):
    argv = ["bench", "engine", "--game", "gobblet", "--games", "2", "--seconds", "0.2", "--json"]
    assert main(argv) == 0
    figures = json.loads(capsys.readouterr().out)["games"]["gobblet"]
    assert figures["infer_ms_median"] > 0 and figures["playouts_per_s"] > 0


def test_bench_vision_far_reports_the_markers_found(capsys):
    argv = ["bench", "vision", "--game", "gobblet", "--scenes", "2", "--zoom", "1.5,1.8", "--json"]
    assert main(argv) == 0
    figures = json.loads(capsys.readouterr().out)["games"]["gobblet"]
    assert 0 < figures["markers_found"] <= figures["markers_visible"] <= 2 * 8


@pytest.mark.parametrize("zoom", ["1.5", "1.8,1.5", "a,b", "0.1,1"])
def test_bench_vision_refuses_a_bad_zoom(zoom, capsys):
    with pytest.raises(SystemExit):
        main(["bench", "vision", "--zoom", zoom])
    assert "--zoom" in capsys.readouterr().err


@pytest.mark.parametrize(("zoom", "verdict"), [(1.0, "[ok]"), (2.8, "[!!]")])
def test_doctor_says_whether_the_camera_is_too_far(zoom, verdict, tmp_path, capsys):
    folder = tmp_path / "frames"
    folder.mkdir()
    domain = Domain(name="zoom", zoom=(zoom, zoom))
    scene = render_scene("blokus", {}, 1, hand=False, domain=domain)
    cv2.imwrite(str(folder / "view.png"), scene.image)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[camera]\nsource = "folder"\npath = "{folder}"\n[display]\ndriver = "dummy"\n'
        f'[journal]\ndirectory = "{tmp_path / "journal"}"\nrecords = "{tmp_path / "records"}"\n',
        encoding="utf-8",
    )
    main(["doctor", "--config", str(config)])
    line = next(x for x in capsys.readouterr().out.splitlines() if "marker size" in x)
    assert line.lstrip().startswith(f"{verdict} marker size")
    if zoom > 1.0:
        assert "too far" in line and "cm from the markers" in line


def test_console_script_runs_as_a_module():
    done = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "games"], capture_output=True, text=True, check=True
    )
    assert "gobblet" in done.stdout


def test_mat_writes_a_pdf_and_a_png(tmp_path):
    pdf, png = tmp_path / "gobblet.pdf", tmp_path / "blokus.png"
    assert main(["mat", "gobblet", "--out", str(pdf)]) == 0
    assert main(["mat", "blokus", "--out", str(png), "--dpi", "72"]) == 0
    assert pdf.read_bytes().startswith(b"%PDF") and png.read_bytes()[1:4] == b"PNG"


@pytest.fixture
def models_folder(tmp_path, monkeypatch):
    """A copy of the committed model files, and ``--models`` forgotten after the test."""
    import vision.models

    monkeypatch.setattr(vision.models, "_chosen", None)
    return edited_models(tmp_path / "models", "gobblet", lambda meta: meta)


@pytest.fixture(scope="module")
def gobblet_photo(tmp_path_factory):
    path = tmp_path_factory.mktemp("read") / "board.png"
    scene = render_scene("gobblet", {"b2": {"color": "white", "size": 3}}, 5, hand=False)
    cv2.imwrite(str(path), scene.image)
    return path


def test_read_with_models_reads_with_that_folders_files(models_folder, gobblet_photo, capsys):
    assert main(["read", str(gobblet_photo), "--json"]) == 0
    committed = json.loads(capsys.readouterr().out)
    assert main(["read", str(gobblet_photo), "--json", "--models", str(models_folder)]) == 0
    assert json.loads(capsys.readouterr().out) == committed  # the same files, the same read
    # a model whose every target is foreign at any probability: the frame is flagged
    other = edited_models(
        models_folder.parent / "flagging",
        "gobblet",
        lambda meta: {**meta, "foreign_threshold": 0.0, "hide_threshold": 0.0},
    )
    assert main(["read", str(gobblet_photo), "--json", "--models", str(other)]) == 0
    flagged = json.loads(capsys.readouterr().out)
    assert flagged.get("occluded") is True and not committed.get("occluded")


@pytest.mark.parametrize("missing", ["folder", "gobblet.json", "gobblet.onnx", "edges.json"])
def test_read_with_models_missing_a_file_is_one_line_and_exit_2(
    missing, models_folder, gobblet_photo, capsys
):
    folder = models_folder / "nowhere" if missing == "folder" else models_folder
    if missing != "folder":
        (models_folder / missing).unlink()
    assert main(["read", str(gobblet_photo), "--models", str(folder)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("referee: ") and str(folder) in err[0], err
    if missing in ("gobblet.json", "edges.json"):  # the hint writes the model where it was sought
        assert f"--out {folder}`" in err[0], err


def test_the_hint_for_a_committed_model_needs_no_out():
    from vision.models import MODELS_DIR, train_command

    assert train_command("gobblet", MODELS_DIR) == "referee train gobblet"


def test_bench_models_is_refused_where_no_board_is_read(models_folder, capsys):
    assert main(["bench", "engine", "--models", str(models_folder)]) == 2
    assert "--models" in capsys.readouterr().err
