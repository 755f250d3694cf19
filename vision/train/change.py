"""Fit a model's ``change_threshold``, ``change_window`` and ``change_box``
(:mod:`vision.change`) on pairs of rendered frames.

Each pair is one scene rendered twice with the same camera, light and box, a few cells changed
between the two (a piece put down, taken, covered), each frame filmed with its own sensor noise
(:func:`vision.synth.photo.film`; in :data:`SAME_NOISE` of the pairs with the same noise, as a
camera that denoises over time films a still board), the second under a random global change of
light (gain, per-channel tint, gamma: a lamp, a cloud, the camera's exposure), each frame
located by its own fresh locator. For each window (the whole patch, or the middle that is the
cell's own) and each box of :data:`BOXES`, the threshold is the score below which only
:data:`MISS_RATE` of the changed targets fall: a missed change is a missed move, a cell flagged
as changed that did not change only goes to the model. The window and box kept are the ones
whose threshold lets fewest unchanged targets through.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from ..change import change_scores, own_window
from ..geometry import load_geometry
from ..locate import BoardLocator, BoardNotFound
from ..sampling import PatchSampler, PatchSpec
from ..synth import random_position, render_scene
from ..synth.photo import film
from .dataset import reader_class, training_domain
from .pool import parallel_map

#: Share of changed targets allowed below the threshold.
MISS_RATE = 1e-3
#: Ranges of the second frame's change of light (a randomisation, not a threshold).
GAIN = (0.8, 1.25)
TINT = 0.04
GAMMA = (0.9, 1.1)
#: Share of the pairs whose two frames carry the same noise.
SAME_NOISE = 0.25
#: The boxes a change score may average the difference over (:func:`vision.change.box_mean`).
BOXES = (1, 3, 5)


def _relit(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` under another light (each channel through a table of its 256 levels)."""
    gain = rng.uniform(*GAIN) * rng.uniform(1 - TINT, 1 + TINT, 3)
    levels = np.arange(256, dtype=np.float32)[:, None]
    x = (levels / 255.0) ** rng.uniform(*GAMMA) * gain
    return cv2.LUT(image, np.clip(x * 255.0, 0, 255).astype(np.uint8)[:, None])


def candidates(recipe: dict[str, Any]) -> list[tuple[float, int]]:
    """The windows and boxes a recipe's change score is fitted over: (window, box) pairs (one
    window where a patch is its cell's own, as a Spectrangle edge's)."""
    return [(window, box) for window in dict.fromkeys((1.0, own(recipe))) for box in BOXES]


def pair_scores(recipe: dict[str, Any], index: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Change scores of every target of pair ``index`` (N x one per :func:`candidates`), and
    which targets really changed."""
    games = recipe["games"]
    game = games[index % len(games)]
    geometry = load_geometry(game)
    rng = np.random.default_rng([seed, index, 7])
    before = random_position(game, rng)
    other = random_position(game, rng)
    names = list(before)
    after = dict(before)
    for k in rng.choice(len(names), size=int(rng.integers(1, 5)), replace=False):
        after[names[k]] = other[names[k]] if other[names[k]] != before[names[k]] else None
    render_seed = seed * 1_000_003 + 20_000_000 + index
    domain = training_domain(recipe)
    noise = [[seed, index, 8], [seed, index, 8 if rng.random() < SAME_NOISE else 9]]
    frames = []
    for cells, noise_seed in zip((before, after), noise, strict=True):
        scene = render_scene(game, cells, render_seed, hand=False, domain=domain, effects=False)
        frames.append(film(scene.image, scene.params, np.random.default_rng(noise_seed)))
    frames[1] = _relit(frames[1], rng)
    spec = PatchSpec.from_json(recipe["patch"])
    sampler = PatchSampler(geometry, spec)
    try:
        patches = [
            sampler.sample(frame, BoardLocator([geometry]).locate(frame, 0.0)) for frame in frames
        ]
    except BoardNotFound:
        return np.zeros((0, len(candidates(recipe)))), np.zeros(0, dtype=bool)
    read = reader_class(recipe["reader"])
    changed = np.array(
        [
            read.label(before[t.cell], t.part) != read.label(after[t.cell], t.part)
            for t in sampler.targets
        ]
    )
    scores = [change_scores(patches[1], patches[0], w, b) for w, b in candidates(recipe)]
    return np.stack(scores, axis=1), changed


def own(recipe: dict[str, Any]) -> float:
    """The own window of a recipe's patches (:func:`vision.change.own_window`; the smallest
    of its games')."""
    spec = PatchSpec.from_json(recipe["patch"])
    return min(own_window(load_geometry(game), spec) for game in recipe["games"])


def _job(args: tuple[dict[str, Any], int, int]) -> tuple[np.ndarray, np.ndarray]:
    cv2.setNumThreads(1)
    return pair_scores(*args)


def fit_change(
    recipe: dict[str, Any], pairs: int, seed: int, workers: int | None = None
) -> dict[str, float]:
    """The change threshold, window and box of a recipe's patches from ``pairs`` rendered
    pairs, and how they do on them (``change_missed``: changed targets below the threshold;
    ``change_false``: unchanged targets at or above it; ``change_false_plain``: the same for
    the whole patch pixel by pixel). Of the :func:`candidates`, the one whose threshold lets
    fewest unchanged targets through is kept (ties: the wider window, the smaller box): a
    Gobblet patch's margin shows the tall pieces round its cell, a Blokus patch's the
    neighbours its square is judged against, and a box averages a camera's noise away."""
    jobs = [(recipe, i, seed) for i in range(pairs)]
    results = parallel_map(_job, jobs, workers, chunksize=4)
    scores = np.concatenate([r[0] for r in results])
    changed = np.concatenate([r[1] for r in results])
    fits = []
    for column, (window, box) in enumerate(candidates(recipe)):
        s = scores[:, column]
        threshold = float(np.quantile(s[changed], MISS_RATE))
        false = float(np.mean(s[~changed] >= threshold))
        fits.append((false, -window, box, threshold, float(np.mean(s[changed] < threshold))))
    false, window, box, threshold, missed = min(fits)
    return {
        "change_threshold": round(threshold, 4),
        "change_window": round(-window, 4),
        "change_box": box,
        "change_pairs": pairs,
        "change_missed": round(missed, 6),
        "change_false": round(false, 6),
        "change_false_plain": round(fits[0][0], 6),
    }
