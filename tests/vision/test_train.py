"""The training side: labelled patches from rendered scenes, and (where PyTorch is installed,
``pip install -e .[train]``) a tiny fit exported to a model file that ``cv2.dnn`` runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.model import EMPTY, FOREIGN, CellModel
from vision.synth import Domain, random_position, render_scene
from vision.train.cli import recipes
from vision.train.dataset import build, labelled_patches, scene_patches


def test_every_recipe_names_a_reader_that_knows_its_classes():
    from vision.train.dataset import reader_class

    for name, recipe in recipes().items():
        if recipe.get("kind") == "edges":
            continue
        cls = reader_class(recipe["reader"])
        assert set(recipe["games"]) <= set(cls.games or recipe["games"]), name
        assert {EMPTY, FOREIGN} <= set(recipe["classes"]), name


@pytest.mark.parametrize("name", ["blokus", "spectrangle"])
def test_patches_are_labelled_with_the_scene_truth(name):
    recipe = recipes()[name]
    seed, index = 3, 0
    patches = scene_patches(recipe, index, seed, Domain.NOMINAL)
    # the same scene again, to compare with its truth
    game = recipe["games"][index % len(recipe["games"])]
    cells = random_position(game, np.random.default_rng([seed, index]))
    scene = render_scene(game, cells, seed * 1_000_003 + index, domain=Domain.NOMINAL)
    classes = recipe["classes"]
    per_cell = 3 if recipe["patch"]["kind"] == "edge" else 1
    assert len(patches.y) == per_cell * len(scene.cells)
    labels = [classes[k] for k in patches.y]
    names = [n for n in scene.cells for _ in range(per_cell)]
    for name_, label in zip(names, labels, strict=True):
        if name_ in scene.hidden:
            assert label == FOREIGN
        elif scene.cells[name_] is None:
            assert label == EMPTY
        else:
            assert label != EMPTY


def test_a_hand_scene_gives_foreign_patches():
    recipe = recipes()["blokus"]
    found = build(recipe, range(6), seed=11, domain="nominal", workers=1)
    assert (found.y == recipe["classes"].index(FOREIGN)).any()
    assert found.x.shape[1:] == (3, 16, 16)


def test_a_tiny_fit_exports_a_model_cv2_runs_like_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from vision.train.fit import _predict, export, fit

    recipe = {**recipes()["blokus"], "games": ["blokus"]}
    data = build(recipe, range(3), seed=5, domain="nominal", workers=1)
    fitted = fit(recipe, data, data, seed=5, epochs=1)
    path = export(fitted, recipe, "tiny", tmp_path, {"seed": 5})
    model = CellModel.load(path)
    assert model.classes == tuple(recipe["classes"])
    ours = model.predict_proba(data.x[:50].astype(np.float32))
    theirs = _predict(fitted.net, data.x[:50])
    assert np.allclose(ours, theirs, atol=1e-4)
    assert torch.is_tensor(torch.zeros(1))


def test_a_scene_whose_board_is_not_found_gives_no_patches():
    scene = render_scene("gobblet", {}, 3, hand=False)
    blank = replace(scene, image=np.full_like(scene.image, 128))
    empty = labelled_patches(recipes()["gobblet"], blank, np.random.default_rng(0))
    assert len(empty.y) == len(empty.under) == len(empty.scene) == len(empty.x) == 0
    assert empty.x.shape[1:] == (6, 24, 24)


def test_the_change_threshold_is_fitted_again_on_a_kept_network(tmp_path):
    import json
    import shutil

    from vision.model import CellModel, model_for
    from vision.train.fit import refit_change

    model = model_for("gobblet")
    for suffix in (".json", ".onnx"):
        shutil.copy(model.meta_path.with_suffix(suffix), tmp_path / f"gobblet{suffix}")
    path = refit_change("gobblet", recipes()["gobblet"], tmp_path, seed=9, workers=1, pairs=3)
    meta = json.loads(path.read_text())
    assert meta["trained"]["change_pairs"] == 3
    assert meta["change_threshold"] == meta["trained"]["change_threshold"] > 0
    again = CellModel.load(path)
    assert again.onnx == model.onnx and again.change_threshold == meta["change_threshold"]
