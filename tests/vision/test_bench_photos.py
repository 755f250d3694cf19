"""``referee bench vision --photos DIR``: labelled photos found, read and scored; bad files."""

import json
import math

import cv2
import numpy as np
import pytest

from firmware.cli import main
from vision.bench_photos import bench_photos, scan
from vision.synth import render_scene

SHIFT = (1.5, -1.0, 0.8)  # the board lies off its outline: mm, mm, degrees
WHITE_4 = {"color": "white", "size": 4}


def _cells(**pieces):
    board = {f"{f}{r}": None for f in "abcd" for r in range(1, 5)}
    board.update(pieces)
    return board


def _label(scene, cells=None, camera=True):
    """The label of a rendered gobblet scene in the vision-samples format."""
    label = {
        "game": "gobblet",
        "cells": cells if cells is not None else scene.cells,
        "occluded": scene.occluded,
        "occluded_cells": sorted(scene.hidden),
    }
    if camera:
        cam = scene.mat_camera
        label["camera"] = {
            "K": cam.matrix.tolist(),
            "R": cam.rotation.tolist(),
            "t": cam.translation.tolist(),
        }
        label["board"] = {"shift_mm": SHIFT[:2], "rot_deg": SHIFT[2], "top_mm": 10.0}
    return label


def _save(path, scene, label):
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), scene.image)
    path.with_suffix(".json").write_text(json.dumps(label), encoding="utf-8")


def _render(cells, seed, hand):
    return render_scene(
        "gobblet", cells, seed, hand=hand, size=(640, 480), distortion=0.0, board_shift=SHIFT
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three gobblet photos, one of them mislabelled (a1 is really empty), in nested folders,
    and three files that are not labelled photos."""
    root = tmp_path_factory.mktemp("photos")
    clear = _render(_cells(b2=WHITE_4, c3={"color": "black", "size": 2}), 100, False)
    _save(root / "clear" / "right.jpg", clear, _label(clear))
    hand = _render(_cells(d4={"color": "black", "size": 4}), 103, True)
    _save(root / "clear" / "deeper" / "hand.png", hand, _label(hand, camera=False))
    other = _render(_cells(c1=WHITE_4), 102, False)
    _save(root / "wrong.jpg", other, _label(other, _cells(a1=WHITE_4, c1=WHITE_4)))
    (root / "bad").mkdir()
    (root / "bad" / "orphan.json").write_text(json.dumps(_label(clear)), encoding="utf-8")
    (root / "bad" / "text.jpg").write_text("not a picture", encoding="utf-8")
    (root / "bad" / "text.json").write_text(json.dumps(_label(clear)), encoding="utf-8")
    cv2.imwrite(str(root / "bad" / "chess.jpg"), clear.image)
    chess = {**_label(clear), "game": "chess"}
    (root / "bad" / "chess.json").write_text(json.dumps(chess), encoding="utf-8")
    return root, hand


def test_photos_are_found_in_subfolders_and_scored_against_their_labels(folder):
    root, hand = folder
    photos, problems = scan(root)
    assert list(photos) == ["gobblet"]
    names = sorted(p.path.name for p in photos["gobblet"])
    assert names == ["hand.png", "right.jpg", "text.jpg", "wrong.jpg"]
    assert len(problems) == 2  # the orphan label and the unknown game
    bench, unreadable = bench_photos("gobblet", photos["gobblet"])
    assert len(unreadable) == 1 and "text.jpg: not an image" in unreadable[0]
    r = bench.figures
    assert (r.scenes, r.hand_scenes, r.not_found, r.false_settled) == (3, 1, 0, 0)
    assert r.board_accuracy == pytest.approx(2 / 3)
    visible = 16 + 16 + 16 - len(hand.hidden)
    assert r.cell_accuracy == pytest.approx((visible - 1) / visible)
    assert r.clear_boards == 0.5 and r.clear_flagged == 0 and r.hand_flagged == 1
    reported = 16 + 16 + 16 - len(hand.hidden)  # a perfect reader leaves the hidden cells out
    assert bench.misread_reported == pytest.approx(1 / reported, rel=0.2)
    assert [(p.name, what) for p, what in bench.failures] == [("wrong.jpg", "misread a1")]
    assert r.locate_px < 1.5 and r.locate_px_p90 < 1.5  # the two labels that give the camera
    assert r.ms_per_frame > 0 and r.first_frame_ms > 0 and r.warp_ms > 0


def test_the_command_prints_the_corpus_keys_and_names_every_bad_file(folder, capsys):
    root, _ = folder
    assert main(["bench", "vision", "--photos", str(root), "--json", "--failures"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["skipped"] == 3
    figures = result["games"]["gobblet"]
    corpus = {"scenes", "cell_accuracy", "board_accuracy", "false_settled", "ms_per_frame"}
    corpus |= {"warp_ms", "first_frame_ms", "not_found", "hand_scenes"}
    corpus |= {"locate_px", "locate_px_p90", "markers_found", "markers_visible"}
    corpus |= {"clear_boards", "clear_flagged", "hand_flagged"}
    photos = {"misread_reported"}
    assert set(figures) == corpus | photos
    lines = err.splitlines()
    assert "Traceback" not in err and len(lines) == 4
    assert any("orphan.json: no photo orphan.jpg or orphan.png beside it" in x for x in lines)
    assert any("chess.json: unknown game 'chess'" in x for x in lines)
    assert any("text.jpg: not an image" in x for x in lines)
    assert any(x.startswith("gobblet ") and "wrong.jpg: misread a1" in x for x in lines)


def test_a_folder_without_labelled_photos_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "notes.json").write_text('{"hello": 1}', encoding="utf-8")
    assert main(["bench", "vision", "--photos", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "not a photo label" in err[0]
    assert err[1] == f"referee: no labelled photos in {tmp_path}"


def test_labels_without_camera_give_nan_placement_figures(folder):
    root, _ = folder
    photos, _ = scan(root)
    hand_only = [p for p in photos["gobblet"] if p.path.name == "hand.png"]
    bench, _ = bench_photos("gobblet", hand_only)
    assert math.isnan(bench.figures.locate_px) and math.isnan(bench.figures.clear_boards)
    assert bench.figures.board_accuracy == 1.0 and bench.figures.hand_flagged == 1
    assert np.isfinite(bench.figures.ms_per_frame)
