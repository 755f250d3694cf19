"""The frame context (vision.model.frame_context): what it is, that a network fitted with one
(Gobblet's) reads a patch against its whole frame, and that one without (the others) ignores it."""

from __future__ import annotations

import numpy as np
import pytest

from vision.model import frame_context, model_for
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
