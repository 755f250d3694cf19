"""What a view gives is worked out once while the view holds, again when the board moves."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.geometry import load_geometry
from vision.sampling import PatchSampler, PatchSpec
from vision.synth import random_position, render_scene
from vision.view_cache import LastView

from .reader_corpus import locate


def test_the_last_key_is_kept_and_another_key_works_out_afresh():
    cache: LastView[list[int]] = LastView()
    calls: list[int] = []

    def compute(value: int) -> list[int]:
        calls.append(value)
        return [value]

    first = cache.get(("view", 1), lambda: compute(1))
    assert cache.get(("view", 1), lambda: compute(99)) is first
    assert cache.get(("view", 2), lambda: compute(2)) == [2]
    assert cache.get(("view", 1), lambda: compute(1)) == [1]  # one slot: 1 again is worked out
    assert calls == [1, 2, 1]


def test_a_value_that_could_not_be_worked_out_is_not_kept():
    cache: LastView[int] = LastView()

    def fail() -> int:
        raise ValueError("no view")

    with pytest.raises(ValueError):
        cache.get("key", fail)
    assert cache.get("key", lambda: 7) == 7


def test_a_still_board_is_sampled_from_the_same_points_and_a_moved_one_afresh():
    game = "blokus-duo"
    cells = random_position(game, np.random.default_rng(3))
    image = render_scene(game, cells, 3, hand=False, effects=False).image
    sampler = PatchSampler(load_geometry(game), PatchSpec("square", 36.0, 16, (2.0,)))
    pose = locate(game, image)
    idx = np.arange(len(sampler.targets))
    kept = sampler._regions(image.shape, pose, idx)
    # the same view, another pose object
    assert sampler._regions(image.shape, replace(pose), idx) is kept
    shift = np.array([[1, 0, 2.0], [0, 1, 0], [0, 0, 1]])  # the board 2 mm along
    moved = replace(pose, homography=pose.homography @ shift)
    afresh = sampler._regions(image.shape, moved, idx)
    assert afresh is not kept
    assert not np.allclose(afresh[0].grid, kept[0].grid)
    assert np.array_equal(sampler.sample(image, pose), sampler.sample(image, replace(pose)))
    # a frame of another size (the camera set to another resolution) gets regions of its own,
    # cropped within it
    small = image[: image.shape[0] // 2]
    [region] = sampler._regions(small.shape, pose, idx)
    assert region is not sampler._regions(image.shape, pose, idx)[0]
    assert region.box[3] <= small.shape[0]
