"""The frame context (vision.model.frame_context): what it is, that a network fitted with one
(Gobblet's) reads a patch against its whole frame, and that one without (the others) ignores it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.model import CellModel, ModelError, frame_context, model_for, ring_means
from vision.readers import reader_for
from vision.sampling import PatchSpec
from vision.synth import Domain, random_position, render_scene

from .reader_corpus import locate

QUANTILES = (0.1, 0.5, 0.9)
SQUARE = PatchSpec("square", 66.0, 8)
POLAR = PatchSpec("polar", 66.0, 8)


def _patches(n: int = 40, channels: int = 3, px: int = 8) -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.uniform(0.0, 1.0, (n, channels, px, px)).astype(np.float32)


def test_the_context_is_the_quantiles_of_the_patches_central_means_channel_by_channel():
    patches = _patches()
    context = frame_context(SQUARE.middle(patches), QUANTILES)
    assert context.shape == (3 * len(QUANTILES),) and context.dtype == np.float32
    centre = patches[:, :, 2:6, 2:6].mean(axis=(2, 3))
    for c in range(3):
        expected = np.quantile(centre[:, c], QUANTILES)
        assert np.allclose(context[c * 3 : c * 3 + 3], expected, atol=1e-6)
    # the patch's border (a neighbour's edge) is not part of it
    bordered = patches.copy()
    bordered[:, :, 0, :] = 5.0
    assert np.allclose(frame_context(SQUARE.middle(bordered), QUANTILES), context)


def test_a_polar_patch_s_context_is_taken_over_its_inner_rings():
    patches = _patches()
    context = frame_context(POLAR.middle(patches), QUANTILES)
    inner = patches[:, :, :4].mean(axis=(2, 3))
    for c in range(3):
        assert np.allclose(context[c * 3 : c * 3 + 3], np.quantile(inner[:, c], QUANTILES))
    ringed = patches.copy()
    ringed[:, :, 4:] = 5.0  # the outer rings (the neighbours) are not part of it
    assert np.allclose(frame_context(POLAR.middle(ringed), QUANTILES), context)


def test_a_frame_shot_brighter_has_a_context_as_much_brighter_and_an_empty_one_is_zeros():
    patches = _patches()
    assert np.allclose(
        frame_context(1.3 * patches, QUANTILES), 1.3 * frame_context(patches, QUANTILES), atol=1e-5
    )
    assert not frame_context(np.zeros((0, 3, 8, 8), np.float32), QUANTILES).any()


def test_ring_means_average_each_ring_round_the_patch_centre_channel_by_channel():
    px = 8
    yy, xx = np.mgrid[:px, :px] - (px - 1) / 2
    radius = np.hypot(yy, xx)
    # a patch whose every pixel holds its ring's number (and, in channel 1, ten times it)
    ring = np.digitize(radius, (2.0, 4.0)).astype(np.float32)
    patch = np.stack([ring, 10 * ring, np.ones_like(ring)])[None]
    means = ring_means(patch, (0.0, 2.0, 4.0, 6.0))
    assert means.shape == (1, 3, 3) and means.dtype == np.float32
    assert np.allclose(means[0], [[0, 1, 2], [0, 10, 20], [1, 1, 1]])
    with pytest.raises(ValueError, match="without pixels"):
        ring_means(patch, (0.0, 0.1, 4.0))


def test_a_context_with_rings_adds_each_ring_s_quantiles_after_the_middle_s_per_channel():
    patches = _patches()
    edges = (0.0, 2.0, 4.0)
    rings = ring_means(patches, edges)
    context = frame_context(SQUARE.middle(patches), QUANTILES, rings)
    q = len(QUANTILES)
    assert context.shape == (3 * q * 3,)
    per_channel = context.reshape(3, 3, q)
    assert np.allclose(
        per_channel[:, 0], frame_context(SQUARE.middle(patches), QUANTILES).reshape(3, q)
    )
    for c in range(3):
        for r in range(2):
            assert np.allclose(
                per_channel[c, 1 + r], np.quantile(rings[:, c, r], QUANTILES), atol=1e-6
            )
    # channel by channel, as the training's light changes move it: brighter frame, brighter rings
    brighter = frame_context(
        SQUARE.middle(1.3 * patches), QUANTILES, ring_means(1.3 * patches, edges)
    )
    assert np.allclose(brighter, 1.3 * context, atol=1e-5)
    assert not frame_context(np.zeros((0, 3, 8, 8)), QUANTILES, np.zeros((0, 3, 2))).any()


def test_a_model_file_with_context_rings_reads_them_and_refuses_them_on_other_patches(tmp_path):
    source = model_for("gobblet")
    meta = {**source.meta, "format": 4, "context_rings": [0, 2, 4]}
    (tmp_path / "m.onnx").write_bytes(source.onnx)
    (tmp_path / "m.json").write_text(json.dumps(meta), encoding="utf-8")
    model = CellModel.load(tmp_path / "m.json")
    assert model.context_rings == (0.0, 2.0, 4.0)
    patches = np.random.default_rng(1).random((6, *source_shape(source)), dtype=np.float32)
    expected = frame_context(
        source.spec.middle(patches), source.context, ring_means(patches, (0, 2, 4))
    )
    assert np.allclose(model.frame_context(patches), expected)
    meta["patch"] = {**meta["patch"], "kind": "polar"}
    (tmp_path / "m.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match="square patches"):
        CellModel.load(tmp_path / "m.json")


def source_shape(model: CellModel) -> tuple[int, int, int]:
    """A patch's shape for ``model``."""
    return (model.spec.channels, model.spec.px, model.spec.px)


def _frame_patches(game: str) -> tuple[np.ndarray, object]:
    reader = reader_for(game)
    cells = random_position(game, np.random.default_rng(5))
    scene = render_scene(game, cells, 77, hand=False, domain=Domain.TRAIN)
    return reader.sampler.sample(scene.image, locate(game, scene.image)), reader


@pytest.mark.parametrize("game", ["gobblet", "blokus"])
def test_a_target_is_read_against_the_whole_frame_whichever_targets_go_to_the_network(game):
    model = model_for(game)
    assert model.context, f"the committed {game} model takes a frame context"
    patches, reader = _frame_patches(game)
    assert model.frame_context(patches).shape == (patches.shape[1] * len(model.context),)
    whole, _ = model.forward(patches, reader.net)
    some = np.arange(0, len(patches), 3)
    # a few targets (the changed cells of a frame) with their frame's context: as when all go
    part, _ = model.forward(patches[some], reader.net, model.frame_context(patches))
    assert np.allclose(part, whole[some], atol=1e-4)
    # the same few as if they were a frame of their own read otherwise: the context counts
    alone, _ = model.forward(patches[some], reader.net, 0.5 * model.frame_context(patches))
    assert not np.allclose(alone, whole[some], atol=1e-2)


@pytest.mark.parametrize("game", ["gobsmacked", "spectrangle"])
def test_a_network_without_a_context_reads_each_target_alone(game):
    model = model_for(game)
    assert not model.context
    assert model.frame_context(np.zeros((4, 3, 8, 8), np.float32)).size == 0
    patches, reader = _frame_patches(game)
    whole, _ = model.forward(patches, reader.net)
    some = np.arange(0, len(patches), 3)
    part, _ = model.forward(patches[some], reader.net, np.ones(15, np.float32))
    assert np.allclose(part, whole[some], atol=1e-4)
