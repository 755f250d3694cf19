"""Doubtful targets read in every view (vision.model.CellModel.views_below): which views a
patch has, that only the doubtful targets cost more passes, that their logits are the mean of
their views', and how many targets the fit allows (vision.train.fit.view_level)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.model import model_for, softmax
from vision.readers import reader_for
from vision.sampling import PatchSpec
from vision.synth import Domain, random_position, render_scene
from vision.train.fit import VIEW_LEVELS, VIEW_SHARE, view_level

from .reader_corpus import locate


def test_a_square_patch_has_its_three_turns_and_an_edge_patch_its_mirror():
    patches = np.arange(2 * 6 * 4 * 4, dtype=np.float32).reshape(2, 6, 4, 4)
    turns = PatchSpec("square", 40.0, 4, (0.0, 20.0)).views(patches)
    assert len(turns) == 3
    # a quarter turn moves the top row to the left column, every plane alike
    assert np.array_equal(turns[0][:, :, :, 0], patches[:, :, 0, ::-1])
    assert np.array_equal(turns[1], patches[:, :, ::-1, ::-1])
    (mirror,) = PatchSpec("edge", 1.3, 4).views(patches[:, :3])
    assert np.array_equal(mirror, patches[:, :3, :, ::-1])
    assert all(v.flags.c_contiguous for v in (*turns, mirror))


def test_a_polar_patch_turns_by_rolling_its_angles_a_quarter_turn_at_a_time():
    patches = np.arange(2 * 6 * 8 * 8, dtype=np.float32).reshape(2, 6, 8, 8)
    turns = PatchSpec("polar", 40.0, 8, (0.0, 20.0)).views(patches)
    assert len(turns) == 3
    # rows are rings and stay; the angle of column a is found a quarter turn on
    for k, turn in enumerate(turns, start=1):
        assert np.array_equal(turn[..., (2 * k) % 8], patches[..., 0])
        assert np.array_equal(turn[:, :, 3], patches[:, :, 3][..., np.r_[-2 * k : 8 - 2 * k]])


def _frame(game: str) -> tuple[np.ndarray, object]:
    reader = reader_for(game)
    cells = random_position(game, np.random.default_rng(11))
    scene = render_scene(game, cells, 313, hand=False, domain=Domain.TRAIN)
    return reader.sampler.sample(scene.image, locate(game, scene.image)), reader


@pytest.mark.parametrize("game", ["gobblet", "spectrangle"])
def test_only_the_doubtful_targets_are_read_again_and_get_the_mean_of_their_views(game):
    patches, reader = _frame(game)
    plain = replace(reader.model, views_below=0.0)
    context = plain.frame_context(patches)
    one, one_embedding = plain.forward(patches, reader.net, context)
    top = softmax(one).max(axis=1)
    # a level between the targets' top probabilities: some doubtful, some not
    level = float(np.median(top)) + 1e-9
    doubtful = top < level
    assert 0 < doubtful.sum() < len(top)
    viewed = replace(plain, views_below=level)
    logits, embedding = viewed.forward(patches, reader.net, context)
    assert np.allclose(logits[~doubtful], one[~doubtful])
    assert np.allclose(embedding[~doubtful], one_embedding[~doubtful])
    views = [plain.forward(v, reader.net, context) for v in plain.spec.views(patches[doubtful])]
    mean = np.mean([one[doubtful], *(v[0] for v in views)], axis=0)
    assert np.allclose(logits[doubtful], mean, atol=1e-5)
    assert not np.allclose(logits[doubtful], one[doubtful], atol=1e-3)
    # one context row per patch (as the fit gives them) reads the same
    rows = np.repeat(context[None], len(patches), axis=0)
    assert np.allclose(viewed.forward(patches, reader.net, rows)[0], logits, atol=1e-5)


def test_the_committed_models_name_their_views_as_the_fit_allows():
    for game in ("blokus", "gobblet", "gobsmacked", "spectrangle"):
        model = model_for(game)
        assert model.meta["views"]["below"] == model.views_below
        assert model.views_below in VIEW_LEVELS


def test_the_fit_reads_in_every_view_as_many_doubtful_targets_as_the_share_allows():
    rng = np.random.default_rng(4)
    top = rng.uniform(0.4, 1.0, 2000)
    probs = np.column_stack([top, 1.0 - top])
    level = view_level(probs)
    assert np.mean(top < level) <= VIEW_SHARE
    higher = VIEW_LEVELS[level < VIEW_LEVELS]
    assert len(higher) == 0 or np.mean(top < higher[0]) > VIEW_SHARE
    # a model doubtful about most of its targets reads them all once
    assert view_level(np.array([[0.4, 0.3, 0.3]] * 100)) == 0.0
    # one sure of every target may read them all in every view
    assert view_level(np.array([[1.0, 0.0]] * 100)) == 1.0
