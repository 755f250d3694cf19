"""The fitted edge model that places a board's edge on a profile across its outline
(vision/edges.py), and its training data (vision/train/edges.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.edges import EdgeModel, EdgeModelError, edge_model, windows
from vision.geometry import load_geometry
from vision.placement import BoardPlacement, rigid
from vision.train.cli import recipes
from vision.train.edges import scene_profiles, targets


def _step(at_mm: float, offsets: np.ndarray, inside=(70, 60, 50), outside=(225, 230, 228)):
    """A profile from a dark board to white paper at ``at_mm``, softened as a lens does."""
    share = 1.0 / (1.0 + np.exp(-(offsets - at_mm) / 0.3))
    return (np.outer(1 - share, inside) + np.outer(share, outside))[None].astype(np.float32)


def test_the_committed_model_places_a_clear_step_and_no_edge_on_plain_paper():
    finder = BoardPlacement(load_geometry("blokus"))
    offsets = finder.offsets
    for at in (-4.0, 0.0, 2.5):
        found = edge_model().edges(_step(at, offsets), offsets)
        assert abs(float(found[0]) - at) < 0.5, at
    paper = np.full((1, len(offsets), 3), 228.0, np.float32)
    paper += np.random.default_rng(0).normal(0.0, 1.5, paper.shape).astype(np.float32)
    assert np.isnan(edge_model().edges(paper, offsets)).all()


def test_a_dim_profile_is_scored_like_a_bright_one():
    offsets = BoardPlacement(load_geometry("blokus")).offsets
    bright = _step(1.0, offsets)
    dim = bright * 0.3
    a, b = windows(bright, 6), windows(dim, 6)
    assert np.allclose(a[..., :-1], b[..., :-1], atol=0.05)  # the shape of the step
    assert a[0, 0, -1] > b[0, 0, -1]  # and how much contrast there is
    assert edge_model().edges(dim, offsets)[0] == pytest.approx(1.0, abs=1.0)


def test_the_model_file_round_trips_and_a_wrong_one_says_what_to_do(tmp_path):
    model = edge_model()
    model.save(tmp_path / "edges.json")
    again = edge_model(str(tmp_path))
    assert again.half == model.half and np.allclose(again.w1, model.w1, atol=1e-6)
    assert again.none == pytest.approx(model.none)
    data = json.loads((tmp_path / "edges.json").read_text())
    with pytest.raises(EdgeModelError, match="format"):
        EdgeModel.from_json({**data, "format": 99})
    with pytest.raises(EdgeModelError, match="referee train edges"):
        edge_model(str(tmp_path / "nowhere"))


def test_the_true_edge_moves_with_the_board():
    finder = BoardPlacement(load_geometry("gobblet"))
    moved = finder.true_offsets(rigid(2.0, 0.0, 0.0, finder.centre))
    normals = finder._normals
    assert np.allclose(moved, 2.0 * normals[:, 0])  # right side out, left side in, others 0
    turned = finder.true_offsets(rigid(0.0, 0.0, 1.0, finder.centre))
    assert np.abs(turned).max() > 1.0 and abs(turned.mean()) < 0.1


def test_training_targets_are_a_distribution_over_boundaries_and_no_edge():
    offsets = np.arange(-10.0, 10.25, 0.5)
    t = targets(np.array([0.1, np.nan, 40.0]), offsets, 6, 0.5)
    assert np.allclose(t.sum(axis=1), 1.0)
    assert t[0, -1] == 0.0 and t[1, -1] == 1.0 and t[2, -1] == 1.0
    boundaries = offsets[5] + 0.25 + 0.5 * np.arange(t.shape[1] - 1)
    assert abs(boundaries[t[0, :-1].argmax()] - 0.1) <= 0.25


def test_a_training_scene_gives_profiles_with_their_true_edges():
    recipe = recipes()["edges"]
    found = scene_profiles(recipe, 0, 3)
    seen = found["seen"]
    assert found["game"] == recipe["games"][0]
    assert seen.colours.shape[0] == len(found["edge"]) and seen.inside.any()
    assert len(found["away"]) > 0
    # the model places most of them where the shift put the board
    offsets = BoardPlacement(load_geometry(found["game"])).offsets
    placed = edge_model().edges(seen.colours[seen.inside], offsets)
    close = np.abs(placed - found["edge"][seen.inside]) <= 1.0
    assert close.mean() > 0.5


def test_a_tiny_edge_fit_writes_a_model_with_its_figures(tmp_path):
    pytest.importorskip("torch")
    from firmware.cli import main

    out = tmp_path / "models"
    args = ["train", "edges", "--scenes", "8", "--epochs", "1", "--workers", "1", "--seed", "4"]
    assert main([*args, "--out", str(out)]) == 0
    model = edge_model(str(out))
    assert model.trained["scenes"] == 8 and model.trained["seed"] == 4
    assert 0.0 <= model.trained["valid_within_1mm"] <= 1.0
    assert model.w1.shape == (6 * model.half + 1, recipes()["edges"]["hidden"])
    # the refits of the cell models leave the edge model alone
    assert main(["train", "edges", "--change-only", "--out", str(tmp_path / "none")]) == 0
    assert not (tmp_path / "none").exists()
