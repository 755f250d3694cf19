"""Labelled patches from rendered scenes, cut by the same locator and sampler as the reader."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any

import numpy as np

from ..geometry import load_geometry
from ..locate import BoardLocator, BoardNotFound
from ..model import FOREIGN, context_size, frame_context, ring_means
from ..placement import rigid
from ..sampling import PatchSampler, PatchSpec
from ..synth import Domain, Scene, random_position, render_scene
from ..synth.traced import render_traced
from .pool import parallel_map

#: Standard deviation of the pose jitter added to the located pose (mm, degrees): the reader
#: must not depend on the locator being perfect.
JITTER = (0.4, 0.3)


@dataclass(frozen=True)
class Patches:
    """Patches (N x C x px x px, float16), their class indices (N), the class each would have
    without the hand (``under``: what a reader must not misreport), the scene of each, its
    scene's frame context (N x K float16, :func:`~vision.model.frame_context`; K is 0 for a
    recipe without one) and the cell of each (its index among the board's cells: a
    Spectrangle cell has three targets)."""

    x: np.ndarray
    y: np.ndarray
    under: np.ndarray
    scene: np.ndarray
    context: np.ndarray
    cell: np.ndarray

    @classmethod
    def concat(cls, parts: Sequence[Patches]) -> Patches:
        """All ``parts`` in one."""
        return cls(
            np.concatenate([p.x for p in parts]),
            np.concatenate([p.y for p in parts]),
            np.concatenate([p.under for p in parts]),
            np.concatenate([p.scene for p in parts]),
            np.concatenate([p.context for p in parts]),
            np.concatenate([p.cell for p in parts]),
        )

    def digest(self) -> str:
        """A digest of every field's values (what a network fitted on them depends on)."""
        h = hashlib.sha256()
        for name in self.__dataclass_fields__:
            values = np.ascontiguousarray(getattr(self, name))
            h.update(f"{name} {values.dtype} {values.shape}".encode())
            h.update(values.data)
        return h.hexdigest()

    def scenes(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct scenes and, for each patch, its scene's index among them."""
        return np.unique(self.scene, return_inverse=True)


def reader_class(path: str) -> Any:
    """The reader class of a recipe's ``module:Class``."""
    module, name = path.split(":")
    return getattr(import_module(module), name)


#: The first scene index of every recipe's validation split (its training scenes count up from
#: 0, so the two never share a scene).
VALIDATION_START = 10_000_000


def training_domain(recipe: dict[str, Any]) -> Domain:
    """The domain a recipe's scenes are drawn from: :data:`~vision.synth.Domain.TRAIN`, with
    the ranges and chances of the recipe's ``domain`` (field name: value, a range as a
    ``[low, high]`` list) in place of the shared ones, so that one model's training may reach
    further than the others' without changing what they were fitted on."""
    return Domain.TRAIN.widened(recipe.get("domain", {}))


def scene_domain(recipe: dict[str, Any], index: int, domain: Domain | None = None) -> Domain:
    """The domain scene ``index`` of a recipe is drawn from: the nominal look for every
    ``nominal_every``-th, ``domain`` (by default the recipe's :func:`training_domain`) for the
    others."""
    every = int(recipe.get("nominal_every", 0))
    if every and index % every == every - 1:
        return Domain.NOMINAL
    return training_domain(recipe) if domain is None else domain


def scene_patches(
    recipe: dict[str, Any], index: int, seed: int, domain: Domain | None = None
) -> Patches:
    """The labelled patches of scene ``index`` of a recipe's corpus (its games in turn; every
    ``nominal_every``-th scene of the recipe in the nominal look, which is part of the world
    too; every ``traced.every``-th, from the first, path-traced at ``traced.spp`` samples a
    pixel, :mod:`vision.synth.traced`, with a hand in 4 in 10 when ``traced.hands`` is true;
    a scene that is both stays painted in the nominal look). ``domain``: that of the scenes
    not in the nominal look, by default the recipe's :func:`training_domain`."""
    domain = scene_domain(recipe, index, domain)
    games = recipe["games"]
    game = games[index % len(games)]
    rng = np.random.default_rng([seed, index])
    cells = random_position(game, rng)
    traced = recipe.get("traced")
    if traced and index % int(traced["every"]) == 0 and domain is not Domain.NOMINAL:
        scene = render_traced(
            game,
            cells,
            seed * 1_000_003 + index,
            domain=domain,
            spp=int(traced["spp"]),
            hand=None if traced.get("hands", False) else False,
        )
    else:
        scene = render_scene(game, cells, seed * 1_000_003 + index, domain=domain)
    return labelled_patches(recipe, scene, rng, index)


def labelled_patches(
    recipe: dict[str, Any], scene: Scene, rng: np.random.Generator, index: int = 0
) -> Patches:
    """The patches of ``scene`` found by a fresh locator (its pose jittered by ``rng``),
    labelled with the scene's truth; none when the board is not found."""
    geometry = load_geometry(scene.game)
    spec = PatchSpec.from_json(recipe["patch"])
    classes = list(recipe["classes"])
    sampler = PatchSampler(geometry, spec)
    quantiles = tuple(recipe.get("context", ()))
    rings = tuple(recipe.get("context_rings", ()))
    if rings and spec.kind != "square":
        raise ValueError(f"context rings need square patches, not {spec.kind}")
    try:
        pose = BoardLocator([geometry]).locate(scene.image, 0.0)
        if JITTER[0] > 0:
            dx, dy = rng.normal(0.0, JITTER[0], 2)
            turn = rng.normal(0.0, JITTER[1])
            shift = rigid(dx, dy, turn, np.mean([c.center for c in geometry.cells], axis=0))
            homography = pose.homography @ shift
            pose = replace(pose, homography=homography, inverse=np.linalg.inv(homography))
        x = sampler.sample(scene.image, pose)
    except BoardNotFound:
        return Patches(
            np.zeros((0, spec.channels, spec.px, spec.px), np.float16),
            *[np.zeros(0, int)] * 3,
            np.zeros((0, context_size(spec.channels, quantiles, rings)), np.float16),
            np.zeros(0, int),
        )
    read = reader_class(recipe["reader"])
    under = np.array(
        [classes.index(read.label(scene.cells[t.cell], t.part)) for t in sampler.targets]
    )
    hidden = np.array([t.cell in scene.hidden for t in sampler.targets], dtype=bool)
    y = np.where(hidden, classes.index(FOREIGN), under)
    if quantiles:
        context = frame_context(spec.middle(x), quantiles, ring_means(x, rings) if rings else None)
    else:
        context = np.zeros(0)
    cell_index = {c.name: i for i, c in enumerate(geometry.cells)}
    return Patches(
        x.astype(np.float16),
        y,
        under,
        np.full(len(y), index),
        np.repeat(context[None, :].astype(np.float16), len(y), axis=0),
        np.array([cell_index[t.cell] for t in sampler.targets], dtype=int),
    )


def _job(args: tuple[dict[str, Any], int, int, Domain | None]) -> Patches:
    return scene_patches(*args)


def build(
    recipe: dict[str, Any],
    scenes: range,
    seed: int,
    domain: Domain | None = None,
    workers: int | None = None,
) -> Patches:
    """The patches of ``scenes`` (indices) of the recipe's corpus, on ``workers`` processes
    (``domain``: as :func:`scene_patches` takes it)."""
    jobs = [(recipe, i, seed, domain) for i in scenes]
    return Patches.concat(parallel_map(_job, jobs, workers, chunksize=8))
