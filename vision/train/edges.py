"""Fit the edge model (:mod:`vision.edges`): where a profile across a board's side crosses the
board's edge, learnt from rendered boards laid a few mm off their outlines.

Each scene of the recipe's ``games`` (in turn; the training domain, every ``nominal_every``-th
in the nominal look) is rendered with the board moved by :func:`vision.synth.random_board_shift`
of its seed, located by a fresh locator as at a table (markers only), and sampled by
:meth:`BoardPlacement.profiles`. The board's true edge on each profile follows from the shift
(:meth:`BoardPlacement.true_offsets`, plus the outer face's foot where the camera sees it).
Each profile is one example, its target a distribution over its boundaries and "no edge":
falling from the true edge to 0 half a millimetre from it; profiles :data:`AWAY_MM` inside and
outside the outline are examples of "no edge". The network is fitted by cross-entropy with
those targets. Scenes with a hand are left out: where the hand lies is not known per profile,
and the placement's consensus fit ignores such profiles.

The validation scenes (other indices) give the model's figures: profiles whose edge is placed
within 1 mm, profiles with no edge placed, profiles away from any edge given one, and how far
the placements found from those profiles put the board's corners from the truth.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..edges import EDGES_FILE, EdgeModel, windows
from ..geometry import load_geometry
from ..locate import BoardLocator, BoardNotFound
from ..placement import BoardPlacement, placement_shift, rigid
from ..synth import random_board_shift, random_position, render_scene
from .dataset import VALIDATION_START, scene_domain
from .pool import parallel_map

#: Half-width (mm) of the target's fall from 1 at the true edge to 0.
TARGET_MM = 0.5
#: Profiles this far (mm) outwards from the outline, which cross no edge of the board (cells
#: and pieces inside, the mat's paper and markers outside): examples of "no edge here".
AWAY_MM = (-22.0, 22.0)


def scene_profiles(recipe: dict[str, Any], index: int, seed: int) -> dict[str, Any]:
    """The profiles of scene ``index`` (``seen``: :class:`Profiles`), the true edge on each
    (``edge``, mm as seen: the outer face's foot included), the board's true placement
    (``truth``) and its ``game``; empty when the board is not found or no profile lies in the
    frame."""
    games = recipe["games"]
    game = games[index % len(games)]
    domain = scene_domain(recipe, index)
    render_seed = seed * 1_000_003 + index
    geometry = load_geometry(game)
    finder = BoardPlacement(geometry)
    cells = random_position(game, np.random.default_rng([seed, index, 7]))
    shift = random_board_shift(render_seed, game)
    scene = render_scene(game, cells, render_seed, hand=False, board_shift=shift, domain=domain)
    truth = rigid(*shift, finder.centre)
    try:
        pose = BoardLocator([geometry], find_placement=False).locate(scene.image, 0.0)
    except BoardNotFound:
        return {}
    seen = finder.profiles(scene.image, pose)
    if seen is None or not seen.inside.any():
        return {}
    away = [finder.profiles(scene.image, pose, s) for s in AWAY_MM]
    return {
        "seen": seen,
        "away": np.concatenate([a.colours[a.inside] for a in away if a is not None]),
        "edge": finder.true_offsets(truth) + seen.foot,
        "truth": truth,
        "game": game,
    }


def _job(args: tuple[dict[str, Any], int, int]) -> dict[str, Any]:
    return scene_profiles(*args)


def targets(edge: np.ndarray, offsets: np.ndarray, half: int, step: float) -> np.ndarray:
    """Per profile, the probability of the edge at each boundary (as :func:`vision.edges.windows`
    lays them out) and, last, of no edge: falling from the true edge ``edge`` (mm, NaN: none)
    to 0 at :data:`TARGET_MM` away; no edge when that is beyond the boundaries."""
    first = offsets[half - 1] + 0.5 * step
    boundaries = first + step * np.arange(len(offsets) - 2 * half + 1)
    near = np.clip(1.0 - np.abs(boundaries[None, :] - edge[:, None]) / TARGET_MM, 0.0, 1.0)
    near = np.nan_to_num(near)
    total = near.sum(axis=1, keepdims=True)
    share = np.where(total > 0, near / np.maximum(total, 1e-9), 0.0)
    return np.concatenate([share, (total == 0).astype(np.float64)], axis=1)


def fit_edges(
    recipe: dict[str, Any],
    seed: int,
    out: Path,
    workers: int | None = None,
    scenes: int | None = None,
    epochs: int | None = None,
) -> Path:
    """Render ``scenes`` (default: the recipe's), fit for ``epochs`` and write
    ``out/edges.json``; return its path."""
    import torch

    start = time.perf_counter()
    n = int(scenes or recipe["scenes"])
    n_valid = min(int(recipe["valid_scenes"]), max(1, n // 6))  # fewer for a small trial
    jobs = [(recipe, i, seed) for i in range(n)]
    valid_jobs = [(recipe, VALIDATION_START + i, seed) for i in range(n_valid)]
    print(f"edges: rendering {n} + {n_valid} scenes", flush=True)
    train = [s for s in parallel_map(_job, jobs, workers, chunksize=4) if s]
    valid = [s for s in parallel_map(_job, valid_jobs, workers, chunksize=4) if s]
    render_s = time.perf_counter() - start
    half = int(recipe["half"])
    offsets = _offsets(recipe)
    step = float(offsets[1] - offsets[0])
    colours = np.concatenate(
        [s["seen"].colours[s["seen"].inside] for s in train] + [s["away"] for s in train]
    )
    edge = np.concatenate(
        [s["edge"][s["seen"].inside] for s in train]
        + [np.full(len(s["away"]), np.nan) for s in train]
    )
    x = torch.from_numpy(windows(colours, half))
    y = torch.from_numpy(targets(edge, offsets, half, step).astype(np.float32))
    print(f"edges: {len(colours)} profiles ({render_s:.0f} s)", flush=True)
    fit_start = time.perf_counter()
    model = _fit_network(
        x, y, half, step, int(recipe["hidden"]), seed, int(epochs or recipe["epochs"])
    )
    figures = validation_figures(model, recipe, valid)
    model = replace(
        model,
        trained={
            "seed": seed,
            "scenes": n,
            "games": list(recipe["games"]),
            "profiles": len(colours),
            "render_seconds": round(render_s, 1),
            "fit_seconds": round(time.perf_counter() - fit_start, 1),
            **figures,
        },
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / EDGES_FILE
    model.save(path)
    print(f"edges: {figures} -> {path}", flush=True)
    return path


def _fit_network(
    x: Any, y: Any, half: int, step: float, hidden: int, seed: int, epochs: int
) -> EdgeModel:
    """The boundary scorer and its "no edge" score fitted to windows ``x`` (profiles x
    boundaries x features) and targets ``y`` (profiles x boundaries + 1), seeded."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[2], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)
    )
    none = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.AdamW([*net.parameters(), none], lr=3e-3, weight_decay=1e-4)
    gen = torch.Generator().manual_seed(seed)
    batch = 256
    for epoch in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        total = 0.0
        for i in range(0, len(x) - batch + 1, batch):
            idx = order[i : i + batch]
            z = net(x[idx])[..., 0]
            full = torch.cat([z, none.expand(len(idx), 1)], dim=1)
            loss = -(y[idx] * torch.log_softmax(full, dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * batch
        print(f"  epoch {epoch + 1}: loss {total / len(x):.4f}", flush=True)
    first, last = net[0], net[2]
    return EdgeModel(
        half=half,
        step_mm=step,
        w1=first.weight.detach().numpy().T.copy(),
        b1=first.bias.detach().numpy().copy(),
        w2=last.weight.detach().numpy()[0].copy(),
        b2=float(last.bias.detach()[0]),
        none=float(none.detach()[0]),
        trained={},
    )


def _offsets(recipe: dict[str, Any]) -> np.ndarray:
    """The samples' offsets along a profile (the same for every board)."""
    return BoardPlacement(load_geometry(recipe["games"][0])).offsets


def validation_figures(
    model: EdgeModel, recipe: dict[str, Any], valid: list[dict[str, Any]]
) -> dict[str, Any]:
    """The model on the validation scenes: profiles placed within 1 mm of their true edge and
    profiles with none placed (of all), profiles away from any edge given one, and how far
    (mm, the outline's corners at most) the consensus fit of each scene's placed edges puts
    the board from its truth (median, 90th percentile, scenes with no placement)."""
    offsets = _offsets(recipe)
    within = none = total = unplaced = away = away_edges = 0
    errors: list[float] = []
    for s in valid:
        seen = s["seen"]
        finder = BoardPlacement(load_geometry(s["game"]), model)
        placed = finder.edges_found(seen)
        found = (placed + seen.foot)[seen.inside]  # as seen: the foot included, as the truth
        total += len(found)
        none += int(np.isnan(found).sum())
        within += int((np.abs(found - s["edge"][seen.inside]) <= 1.0).sum())
        away += len(s["away"])
        away_edges += int(np.isfinite(model.edges(s["away"], offsets)).sum())
        fitted = finder.from_edges(placed)
        if fitted is None:
            unplaced += 1
        else:
            errors.append(placement_shift(finder, fitted, s["truth"]))
    return {
        "valid_scenes": len(valid),
        "valid_profiles": total,
        "valid_within_1mm": round(within / max(total, 1), 4),
        "valid_no_edge": round(none / max(total, 1), 4),
        "valid_edge_where_none": round(away_edges / max(away, 1), 4),
        "valid_placement_mm": round(float(np.median(errors)), 3) if errors else None,
        "valid_placement_mm_p90": round(float(np.percentile(errors, 90)), 3) if errors else None,
        "valid_unplaced": unplaced,
    }
