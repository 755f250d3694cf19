"""Patches land where the cells are: checked on clean renders, through the real locator."""

from __future__ import annotations

import numpy as np
import pytest

from vision.geometry import hex_bgr, load_geometry
from vision.sampling import EDGES, PatchSampler, PatchSpec, polar_unit
from vision.synth import random_position, render_scene

from .reader_corpus import locate


def _patches(game: str, spec: PatchSpec, seed: int):
    cells = random_position(game, np.random.default_rng(seed))
    scene = render_scene(game, cells, seed, hand=False, effects=False)
    sampler = PatchSampler(load_geometry(game), spec)
    return scene, sampler, sampler.sample(scene.image, locate(game, scene.image))


def _nearest(colour: np.ndarray, palette: dict[str, np.ndarray]) -> str:
    """The palette entry of the closest chromaticity (colour and palette in reflectance)."""

    def chroma(c: np.ndarray) -> np.ndarray:
        c = np.maximum(c, 1e-3)
        return c / c.sum()

    return min(palette, key=lambda k: float(np.linalg.norm(chroma(colour) - chroma(palette[k]))))


def test_spec_round_trips_through_json():
    spec = PatchSpec("edge", 1.3, 20, (1.5, 4.0))
    assert PatchSpec.from_json(spec.to_json()) == spec
    assert spec.channels == 6


def _blokus_middles_read(kind: str, middle) -> int:
    """How many placed Blokus squares the ``middle`` of their ``kind`` patches (28 mm, 16 px)
    shows in their colour; asserts that every one does."""
    scene, sampler, patches = _patches("blokus", PatchSpec(kind, 28.0, 16, (2.0,)), 5)
    pieces = load_geometry("blokus").extra["look"]["pieces"]
    palette = {colour: hex_bgr(pieces[colour]) for colour in ("orange", "violet")}
    assert patches.shape == (144, 3, 16, 16)
    placed = 0
    for name, patch in zip(sampler.cells, patches, strict=True):
        if scene.cells[name] is not None:
            placed += 1
            colour = middle(patch).reshape(3, -1).mean(axis=1)
            assert _nearest(colour, palette) == scene.cells[name], name
    return placed


def test_square_patch_centres_show_each_cells_content():
    assert _blokus_middles_read("square", lambda patch: patch[:, 6:10, 6:10]) > 10


def test_edge_patches_put_each_edge_at_the_bottom():
    game = "spectrangle"
    scene, sampler, patches = _patches(game, PatchSpec("edge", 1.3, 20, (1.5,)), 8)
    look = load_geometry(game).extra["look"]["pieces"]
    palette = {k: hex_bgr(v) for k, v in look.items() if k != "white"}
    assert patches.shape == (36 * len(EDGES), 3, 20, 20)
    checked = 0
    for target, patch in zip(sampler.targets, patches, strict=True):
        colour = scene.cells[target.cell]
        if colour is None or colour[target.part] == "white":
            continue
        # just above the middle of the bottom edge, inside the tile's region of that edge
        spot = patch[:, 15:16, 9:11].reshape(3, -1).mean(axis=1)
        assert _nearest(spot, palette) == colour[target.part], (target.cell, target.part)
        checked += 1
    assert checked > 20


def test_polar_patches_lay_rings_outwards_and_show_each_cells_content_inside():
    unit = polar_unit(8)
    radius = np.hypot(*(unit - 0.5).T).reshape(8, 8)
    angle = np.arctan2(*(unit - 0.5).T[::-1]).reshape(8, 8) % (2 * np.pi)
    assert np.allclose(radius, ((np.arange(8) + 0.5) / 16)[:, None])  # row r: one ring
    assert np.allclose(angle, (2 * np.pi * np.arange(8) / 8)[None, :])  # column a: one angle
    # the inner rings, within 5.25 mm of the centre
    assert _blokus_middles_read("polar", lambda patch: patch[:, :6]) > 10


def test_unknown_patch_kind_is_refused():
    with pytest.raises(ValueError, match="unknown patch kind"):
        PatchSampler(load_geometry("blokus"), PatchSpec("hexagon", 10.0, 8))
