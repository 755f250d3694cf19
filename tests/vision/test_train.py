"""The training side: labelled patches from rendered scenes, and (where PyTorch is installed,
``pip install -e .[train]``) a tiny fit exported to a model file that ``cv2.dnn`` runs."""

from __future__ import annotations

import json
import platform
from dataclasses import replace

import numpy as np
import pytest

from vision.geometry import load_geometry
from vision.model import EMPTY, FOREIGN, CellModel
from vision.readers import READERS
from vision.sampling import PatchSpec
from vision.synth import Domain, random_position, render_scene
from vision.train.cli import recipes
from vision.train.dataset import build, labelled_patches, scene_patches, training_domain


def _cell_recipes() -> list[tuple[str, dict]]:
    """Every cell model's recipe with its name (the edge and still-look recipes, of a
    ``kind`` of their own, are no cell models)."""
    return [(name, recipe) for name, recipe in recipes().items() if not recipe.get("kind")]


def test_every_recipe_names_a_reader_that_knows_its_classes():
    from vision.train.dataset import reader_class

    for name, recipe in _cell_recipes():
        cls = reader_class(recipe["reader"])
        assert set(recipe["games"]) <= set(cls.games or recipe["games"]), name
        # the reader the model is fitted with is the one its games are read with
        assert all(READERS[game] == recipe["reader"] for game in recipe["games"]), name
        assert {EMPTY, FOREIGN} <= set(recipe["classes"]), name
        assert training_domain(recipe).name == "train", name  # its widened ranges are fields


def test_every_committed_cell_model_was_fitted_from_its_recipe():
    """A recipe and the model file it fits change together: the committed file carries the
    recipe's games, classes, patch, frame-context quantiles and (where it records them) epochs
    (a recipe edited without the model fitted again, or a trial's model copied in without its
    recipe, fails here)."""
    from vision.models import MODELS_DIR

    for name, recipe in _cell_recipes():
        meta = json.loads((MODELS_DIR / f"{name}.json").read_text())
        assert meta["games"] == recipe["games"], name
        assert meta["classes"] == recipe["classes"], name
        assert meta["patch"] == recipe["patch"], name
        assert meta.get("context") == recipe.get("context"), name
        assert meta["trained"].get("epochs", recipe["epochs"]) == recipe["epochs"], name


def test_a_recipe_widens_only_its_own_training_domain():
    assert training_domain({}) == Domain.TRAIN  # the committed recipes' domain unless they say
    wide = training_domain({"domain": {"haze": [0.0, 0.35], "two_hands": 0.5}})
    assert wide == replace(Domain.TRAIN, haze=(0.0, 0.35), two_hands=0.5)
    assert Domain.TRAIN.haze != (0.0, 0.35)  # the shared domain is untouched
    for bad in ({"hazy": [0, 1]}, {"name": "heldout"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            training_domain({"domain": bad})


def test_a_games_train_split_is_what_its_model_was_fitted_on():
    """The bench's ``train`` split draws each game's committed model's own training domain:
    its recipe's widening, as the model file records it (Gobsmacked's squares are rounded
    further than the shared domain's)."""
    from vision.bench import split_domain

    for name, recipe in _cell_recipes():
        for game in recipe["games"]:
            assert split_domain("train", game) == training_domain(recipe), (name, game)
    assert split_domain("train", "gobsmacked") != Domain.TRAIN
    assert split_domain("heldout", "gobsmacked") == Domain.HELDOUT


def test_scenes_are_drawn_from_the_recipes_domain():
    """A widened range reaches the rendered scenes: Gobsmacked squares rounded into circles
    (rounding 1) give other patches than the shared domain's, the same scene otherwise."""
    recipe = {**recipes()["gobsmacked"], "nominal_every": 0}
    plain = scene_patches(recipe, 1, 3)
    round_ = scene_patches({**recipe, "domain": {"motif_rounding": [1.0, 1.0]}}, 1, 3)
    assert np.array_equal(plain.y, round_.y)
    assert not np.array_equal(plain.x, round_.x)


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
    # each target knows its cell (a Spectrangle cell's three edges one cell)
    assert [load_geometry(game).cells[k].name for k in patches.cell] == names
    for name_, label in zip(names, labels, strict=True):
        if name_ in scene.hidden:
            assert label == FOREIGN
        elif scene.cells[name_] is None:
            assert label == EMPTY
        else:
            assert label != EMPTY


def test_a_hand_scene_gives_foreign_patches():
    recipe = recipes()["blokus"]
    found = build(recipe, range(6), seed=11, domain=Domain.NOMINAL, workers=1)
    assert (found.y == recipe["classes"].index(FOREIGN)).any()
    assert found.x.shape[1:] == (3, 16, 16)


@pytest.mark.parametrize(
    ("context", "rings", "full", "threads", "standardise", "separable", "precision"),
    [
        ((), (), 1, 1, False, False, "float32"),
        ((0.1, 0.5, 0.9), (), 1, 1, False, False, "float32"),
        ((0.1, 0.5, 0.9), (0.0, 3.0, 6.0, 8.0), 1, 1, False, False, "float32"),
        ((), (), 2, 2, False, False, "float32"),
        ((), (), 1, 1, True, False, "float32"),
        ((), (), 1, 1, False, True, "float32"),
        ((0.1, 0.5, 0.9), (), 1, 2, False, False, "bf16"),
    ],
)
def test_a_tiny_fit_exports_a_model_cv2_runs_like_torch(
    tmp_path, context, rings, full, threads, standardise, separable, precision
):
    torch = pytest.importorskip("torch")
    from vision.train.fit import export, fit, predict

    recipe = {
        **recipes()["blokus"],
        "games": ["blokus"],
        "context": list(context),
        "context_rings": list(rings),
        "full": full,
        "standardise": standardise,
        "separable": separable,
        "precision": precision,
    }
    data = build(recipe, range(3), seed=5, domain=Domain.NOMINAL, workers=1)
    assert data.context.shape == (len(data.y), 3 * len(context) * max(1, len(rings)))
    fitted = fit(recipe, data, seed=5, epochs=1, threads=threads)
    assert torch.get_num_threads() == threads
    # ``full`` convolutions see the patch at its full resolution, before the first pooling
    layers = list(fitted.net.features)
    first_pool = next(i for i, m in enumerate(layers) if isinstance(m, torch.nn.MaxPool2d))
    assert sum(isinstance(m, torch.nn.Conv2d) for m in layers[:first_pool]) == full
    # a standardised network's first convolution sees each channel twice
    first = next(m for m in layers if isinstance(m, torch.nn.Conv2d))
    assert first.in_channels == (6 if standardise else 3)
    # a separable network's convolutions after the first pooling see one channel each
    grouped = [m for m in layers[first_pool:] if isinstance(m, torch.nn.Conv2d) and m.groups > 1]
    assert len(grouped) == (2 if separable else 0)
    assert all(m.groups == m.in_channels == m.out_channels for m in grouped)
    # a bfloat16 fit keeps its weights in float32, in the usual layout
    assert all(p.dtype == torch.float32 and p.is_contiguous() for p in fitted.net.parameters())
    path = export(fitted, recipe, "tiny", tmp_path, {"seed": 5})
    model = CellModel.load(path)
    assert model.classes == tuple(recipe["classes"])
    assert model.context == context and model.context_rings == rings
    # the reader works the context out of a frame's patches as the training set did
    scene = data.scene == data.scene[0]
    frame = data.x[scene].astype(np.float32)
    assert np.allclose(model.frame_context(frame), data.context[scene][0], atol=2e-3)
    ours = model.predict_proba(data.x[:50].astype(np.float32), None, data.context[:50])
    theirs = predict(fitted.net, data.x[:50], data.context[:50])
    assert np.allclose(ours, theirs, atol=1e-4)
    assert torch.is_tensor(torch.zeros(1))
    if context:
        # the context is the frame's: another one changes what a patch means
        dark = model.predict_proba(data.x[:50].astype(np.float32), None, data.context[:50] * 0.3)
        assert not np.allclose(ours, dark, atol=1e-4)


def test_a_recipe_of_an_unknown_precision_is_refused():
    pytest.importorskip("torch")
    from vision.train.fit import fit

    recipe = {**recipes()["blokus"], "games": ["blokus"], "precision": "fp16"}
    data = build(recipe, range(1), seed=5, domain=Domain.NOMINAL, workers=1)
    with pytest.raises(ValueError, match="float32 or bf16"):
        fit(recipe, data, seed=5, epochs=1)


def test_standardised_channels_are_each_patch_s_own_contrast():
    torch = pytest.importorskip("torch")
    from vision.train.fit import SPREAD_FLOOR, network

    net = network(3, 16, 4, 8, standardise=True)
    standardised = net.features[0]
    x = torch.rand(5, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    out = standardised(x)
    assert out.shape == (5, 6, 16, 16)
    assert torch.equal(out[:, :3], x)
    # each channel of each patch: mean 0, spread just under 1 (the floor added to it)
    assert torch.allclose(out[:, 3:].mean(dim=(2, 3)), torch.zeros(5, 3), atol=1e-5)
    spread = out[:, 3:].std(dim=(2, 3), unbiased=False)
    assert bool((spread < 1).all()) and bool((spread > 1 - 2 * SPREAD_FLOOR / 0.2).all())
    # a dimmer, offset copy of a patch has nearly the same standardised channels (the floor
    # weighs more on its halved spread), unlike its plain ones
    dim = standardised(0.5 * x + 0.2)
    assert torch.allclose(dim[:, 3:], out[:, 3:], rtol=0.1, atol=1e-3)
    assert not torch.allclose(dim[:, :3], out[:, :3], rtol=0.1, atol=1e-3)


@pytest.mark.parametrize("kind", ["polar", "square"])
def test_a_polar_patch_is_turned_by_any_angle_and_a_square_one_by_quarters(kind):
    torch = pytest.importorskip("torch")
    from vision.train.fit import augment

    # one bright column: a polar patch's columns are its angles, its rows its radii
    x = torch.zeros(3, 6, 12, 12)
    x[:, :, :, 3] = 4.0
    lines = set()
    for seed in range(24):
        out, _ = augment(x, torch.zeros(3, 0), kind, torch.Generator().manual_seed(seed))
        column = out.mean(dim=(0, 1, 2)).argmax().item()
        row = out.mean(dim=(0, 1, 3)).argmax().item()
        column_is_bright = bool((out.mean(dim=2)[..., column] > 1.0).all())
        lines.add(("column", column) if column_is_bright else ("row", row))
    if kind == "polar":
        # turned about its centre (any roll of the angles, perhaps mirrored): never a row
        assert {what for what, _ in lines} == {"column"}
        assert len(lines) > 4
    else:
        # quarter turns and mirrors only: the line lies on column or row 3 or 8
        assert {what for what, _ in lines} == {"column", "row"}
        assert {at for _, at in lines} <= {3, 8}


def test_every_patch_of_a_scene_carries_that_scene_s_frame_context():
    from vision.model import frame_context

    recipe = {**recipes()["blokus"], "context": [0.25, 0.5, 0.75]}
    data = build(recipe, range(2), seed=5, domain=Domain.NOMINAL, workers=1)
    for scene in np.unique(data.scene):
        rows = data.scene == scene
        middles = PatchSpec.from_json(recipe["patch"]).middle(data.x[rows].astype(np.float32))
        expected = frame_context(middles, (0.25, 0.5, 0.75))
        assert np.allclose(data.context[rows], expected[None, :], atol=2e-3)
    assert not np.allclose(data.context[data.scene == 0][0], data.context[data.scene == 1][0])


def test_context_rings_are_refused_for_patches_that_are_not_square():
    recipe = {**recipes()["blokus"], "context": [0.5], "context_rings": [0, 2, 4]}
    recipe["patch"] = {**recipe["patch"], "kind": "polar"}
    with pytest.raises(ValueError, match="square patches"):
        build(recipe, range(1), seed=5, domain=Domain.NOMINAL, workers=1)


def test_a_scene_whose_board_is_not_found_gives_no_patches():
    scene = render_scene("gobblet", {}, 3, hand=False)
    blank = replace(scene, image=np.full_like(scene.image, 128))
    recipe = recipes()["gobblet"]
    empty = labelled_patches(recipe, blank, np.random.default_rng(0))
    assert len(empty.y) == len(empty.under) == len(empty.scene) == len(empty.x) == 0
    px = recipe["patch"]["px"]
    assert empty.x.shape[1:] == (3 * len(recipe["patch"]["heights_mm"]), px, px)


def test_the_change_threshold_is_fitted_again_on_a_kept_network(tmp_path):
    import json
    import shutil

    from vision.model import CellModel, model_for
    from vision.train.change import BOXES
    from vision.train.fit import refit_change

    model = model_for("gobblet")
    for suffix in (".json", ".onnx"):
        shutil.copy(model.meta_path.with_suffix(suffix), tmp_path / f"gobblet{suffix}")
    before = (tmp_path / "gobblet.json").open("rb")  # as a bench reading the folder would
    path = refit_change("gobblet", recipes()["gobblet"], tmp_path, seed=9, workers=1, pairs=3)
    meta = json.loads(path.read_text())
    # the file is replaced whole, not rewritten in place: a reader already in it reads the
    # old model's JSON to its end, and nothing is left beside it
    with before:
        assert json.loads(before.read()) == json.loads(model.meta_path.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gobblet.json", "gobblet.onnx"]
    assert meta["trained"]["change_pairs"] == 3
    assert meta["change_threshold"] == meta["trained"]["change_threshold"] > 0
    # the window (the whole patch or the cell's own) and box kept are the ones that let fewest
    # unchanged targets through; the reader compares patches over the same ones
    assert meta["change_window"] in (1.0, round(55.0 / 66.0, 4))
    assert meta["change_box"] in BOXES
    assert meta["trained"]["change_false"] <= meta["trained"]["change_false_plain"]
    assert "change_false_whole" not in meta["trained"]  # an earlier fit's figures are gone
    again = CellModel.load(path)
    assert again.onnx == model.onnx and again.change_threshold == meta["change_threshold"]
    assert (again.change_window, again.change_box) == (meta["change_window"], meta["change_box"])


def _patches(y, under, scene, cell=None):
    from vision.train.dataset import Patches

    n = len(y)
    return Patches(
        np.zeros((n, 3, 2, 2), np.float16),
        np.array(y),
        np.array(under),
        np.array(scene),
        np.zeros((n, 0), np.float16),
        np.arange(n) if cell is None else np.array(cell),
    )


def test_the_frame_is_flagged_above_every_clear_board_and_hands_hide_their_doubtful_targets():
    from vision.train.fit import SceneReads, foreign_thresholds

    # classes: 0 empty, 1 piece, 2 foreign; scenes 0-1 clear, 2-3 with a hand over targets
    f = 2
    rows = [
        # scene 0: clear, one target a little foreign-looking (a shadow)
        (0, 0, 0, [0.5, 0.1, 0.4]),
        (0, 1, 1, [0.1, 0.9, 0.0]),
        # scene 1: clear, a glare the model finds half foreign
        (1, 1, 1, [0.1, 0.3, 0.6]),
        # scene 2: a hand, one target certainly foreign, one at its edge doubtful and misread
        (2, f, 0, [0.0, 0.02, 0.98]),
        (2, f, 0, [0.1, 0.45, 0.45]),
        (2, 0, 0, [0.9, 0.05, 0.05]),
        # scene 3: a hand, certainly foreign
        (3, f, 1, [0.0, 0.01, 0.99]),
    ]
    valid = _patches([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows])
    probs = np.array([r[3] for r in rows])
    t = foreign_thresholds(probs, valid, f)
    # no clear board is flagged, every hand is: the flag lies above 0.6 and at most 0.98
    assert 0.6 < t.flag <= 0.98
    reads = SceneReads.at(probs, valid, f, t.flag)
    assert reads.clear_flagged == 0 and reads.hands_missed == 0
    assert list(reads.right) == [True, True, True, True]
    # the doubtful target under the hand (read as a piece, it covers an empty cell) is left out,
    # the cell in view beside it (foreign 0.05) is not
    assert 0.05 < t.hide <= 0.45


def test_a_cell_of_three_targets_is_hidden_whole_as_the_reader_hides_it():
    from vision.train.fit import cell_foreign, foreign_thresholds, validation_figures

    # classes: 0 empty, 1 piece, 2 foreign; (scene, cell, truth, under, probabilities) of the
    # edges of Spectrangle-like cells, three targets a cell
    f = 2
    rows = [
        # scene 0: clear, one edge of a glare the model finds 0.9 foreign: the flag lies above
        (0, 0, 1, 1, [0.05, 0.05, 0.9]),
        (0, 0, 1, 1, [0.05, 0.9, 0.05]),
        (0, 0, 1, 1, [0.05, 0.9, 0.05]),
        # scene 1: a hand over cell 0
        (1, 0, f, 0, [0.0, 0.01, 0.99]),
        (1, 0, f, 0, [0.0, 0.01, 0.99]),
        (1, 0, f, 0, [0.0, 0.01, 0.99]),
        # cell 1 in view beside it, read right, one edge 0.6 foreign (the hand's shadow)
        (1, 1, 1, 1, [0.0, 0.4, 0.6]),
        (1, 1, 1, 1, [0.0, 0.98, 0.02]),
        (1, 1, 1, 1, [0.0, 0.98, 0.02]),
        # cell 2 under the hand's edge, 0.5 foreign, two of its edges read as a piece
        (1, 2, f, 0, [0.1, 0.4, 0.5]),
        (1, 2, f, 0, [0.1, 0.4, 0.5]),
        (1, 2, f, 0, [0.4, 0.1, 0.5]),
    ]
    valid = _patches(
        [r[2] for r in rows], [r[3] for r in rows], [r[0] for r in rows], [r[1] for r in rows]
    )
    probs = cell_foreign(np.array([r[4] for r in rows]), valid, f)
    # a cell is as foreign as its most foreign edge
    assert probs[:3, f].tolist() == [0.9] * 3 and probs[6:9, f].tolist() == [0.6] * 3
    t = foreign_thresholds(probs, valid, f)
    assert 0.9 < t.flag <= 0.99
    # edge by edge, hiding from 0.5 on would cost one edge in view (cell 1's) and spare two
    # misread ones; but the reader hides cell 1 whole, three edges in view: worse than the two
    # misread edges of cell 2 shown
    assert t.hide > 0.6
    figures = validation_figures(probs, valid, f, t)
    assert figures["valid_clear_hidden"] == 0.0
    assert figures["valid_foreign_hidden"] == 0.5


def test_a_missed_hand_costs_more_than_a_clear_board_flagged():
    from vision.train.fit import foreign_thresholds

    # one clear scene whose glare looks more foreign than a hand's sleeve looks: the referee
    # must rather wait on the clear board than judge a board under the sleeve misread
    f = 2
    rows = [
        (0, 1, 1, [0.1, 0.2, 0.7]),
        (1, f, 0, [0.0, 0.4, 0.6]),
    ]
    valid = _patches([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows])
    t = foreign_thresholds(np.array([r[3] for r in rows]), valid, f)
    assert t.flag <= 0.6


def test_the_validation_split_is_the_recipes_count_in_proportion_to_the_run():
    from vision.train.fit import validation_indices

    recipe = {"scenes": 2500, "valid_scenes": 2000}
    assert validation_indices(recipe, 2500) == range(10_000_000, 10_002_000)
    assert len(validation_indices(recipe, 5000)) == 4000
    assert len(validation_indices(recipe, 8)) == 6
    assert len(validation_indices(recipe, 1)) == 1


def test_the_foreign_thresholds_are_fitted_again_on_a_kept_network(tmp_path):
    import json
    import shutil

    from vision.model import CellModel, model_for
    from vision.train.fit import refit_threshold

    model = model_for("gobsmacked")
    for suffix in (".json", ".onnx"):
        shutil.copy(model.meta_path.with_suffix(suffix), tmp_path / f"gobsmacked{suffix}")
    path = refit_threshold(
        "gobsmacked", recipes()["gobsmacked"], tmp_path, seed=1, workers=1, scenes=8
    )
    meta = json.loads(path.read_text())
    assert meta["trained"]["valid_scenes"] == 6  # the recipe's 2000 of 2500, for 8
    again = CellModel.load(path)
    assert again.onnx == model.onnx
    assert 0.05 <= again.hide_threshold <= 0.995 and 0.05 <= again.foreign_threshold <= 0.995
    assert again.foreign_threshold == meta["foreign_threshold"]
    # the views are fitted with them: the thresholds are those of the views the referee reads
    assert again.views_below == meta["views"]["below"] > 0


def test_a_fit_records_its_threads_and_the_versions_it_ran_with():
    """A seed reproduces a fit with the same threads and libraries: both go into the file."""
    from importlib.metadata import version

    from vision.train.fit import FIT_LIBRARIES, fit_environment

    env = fit_environment(3)
    assert env["fit_threads"] == 3
    assert set(env["libraries"]) == set(FIT_LIBRARIES)
    assert env["libraries"]["numpy"] == version("numpy") == np.__version__
    assert env["libraries"]["onnxruntime"] == version("onnxruntime")
    assert all(v is None or isinstance(v, str) for v in env["libraries"].values())
    # and the processor: PyTorch rounds by the kernels this instruction set gets
    cpu = env["processor"]
    assert cpu["machine"] == platform.machine() and cpu["machine"]
    assert cpu["model"] is None or cpu["model"].strip() == cpu["model"] != ""
    try:
        import torch
    except ImportError:
        assert cpu["kernels"] is None
    else:
        assert cpu["kernels"] == torch.backends.cpu.get_cpu_capability() != ""


def test_a_fit_records_the_versions_of_every_library_the_training_environment_pins():
    from pathlib import Path

    from vision.train.fit import FIT_LIBRARIES

    pins = Path(__file__).parents[2] / "vision" / "train" / "constraints.txt"
    lines = [line.strip() for line in pins.read_text().splitlines()]
    pinned = {line.split("==")[0] for line in lines if line and not line.startswith("#")}
    assert pinned == set(FIT_LIBRARIES)
