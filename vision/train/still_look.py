"""Fit the still-look model (:mod:`vision.still_look`): is a marker unread in a still frame
covered, or in place under fresh noise?

Each scene of the recipe's ``games`` (in turn; the training domain, every ``nominal_every``-th in
the nominal look) is rendered without a hand and with one (:func:`vision.synth.render_scene`'s
hand, which may cover markers) and filmed three times through its light and camera, each frame
with sensor noise of its own (:func:`vision.synth.photo.film`): the board as the still run first
sees it (the reference: each marker's crop then), the board as it was, and the board with the
hand over it. Every marker wholly in the
frame gives one example per filmed frame: its unlikeness to its crop and the frame's yardstick
(the median unlikeness of the other markers the hand leaves uncovered), labelled covered when
the renderer puts any of its corners or its centre under the hand. A logistic regression with
balanced classes (the prior of a marker being covered when it is unread is no business of
this fit) is fitted by Newton's method; validation scenes (other indices) give its figures.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..still_look import STILL_LOOK_FILE, StillLook, features, outline_mask, unlikeness
from ..synth import random_position, render_scene
from ..synth.photo import film
from .dataset import VALIDATION_START, scene_domain
from .pool import parallel_map


def _unlike(before: np.ndarray, now: np.ndarray, quad: np.ndarray) -> float:
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    mask = outline_mask((y1 - y0, x1 - x0), quad - (x0, y0))
    return unlikeness(before[y0:y1, x0:x1], now[y0:y1, x0:x1], mask)


def scene_examples(recipe: dict[str, Any], index: int, seed: int) -> np.ndarray:
    """Examples of scene ``index``: rows of unlikeness, yardstick, covered (0 or 1) and whether
    the frame has the hand in it (0 or 1)."""
    games = recipe["games"]
    game = games[index % len(games)]
    domain = scene_domain(recipe, index)
    render_seed = seed * 1_000_003 + index
    cells = random_position(game, np.random.default_rng([seed, index, 7]))
    plain = render_scene(game, cells, render_seed, hand=False, domain=domain, effects=False)
    handed = render_scene(game, cells, render_seed, hand=True, domain=domain, effects=False)
    rng = np.random.default_rng([seed, index, 11])

    def grey(picture: np.ndarray) -> np.ndarray:  # a frame of it, in grey
        return cv2.cvtColor(film(picture, plain.params, rng), cv2.COLOR_BGR2GRAY)

    before = grey(plain.image)
    quads = plain.marker_quads()
    rows = []
    frames = ((plain.image, frozenset(), 0.0), (handed.image, handed.hidden_markers, 1.0))
    for picture, covered, hand in frames:
        now = grey(picture)
        unlike = {i: _unlike(before, now, q) for i, q in quads.items()}
        for i, u in unlike.items():
            others = [v for j, v in unlike.items() if j != i and j not in covered]
            if others:
                rows.append((u, float(np.median(others)), float(i in covered), hand))
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def _job(args: tuple[dict[str, Any], int, int]) -> np.ndarray:
    return scene_examples(*args)


def fit_logistic(x: np.ndarray, y: np.ndarray, iterations: int = 50) -> np.ndarray:
    """Weights (then the bias) of a logistic regression of ``y`` (0/1) on ``x`` (N x F), each
    class weighted to half the total, fitted by Newton's method with a tiny ridge."""
    design = np.column_stack([x, np.ones(len(x))])
    balance = np.where(y > 0, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
    w = np.zeros(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        gradient = design.T @ (balance * (p - y))
        hessian = (design * (balance * p * (1 - p))[:, None]).T @ design
        step = np.linalg.solve(hessian + 1e-6 * np.eye(len(w)), gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def figures(model: StillLook, examples: np.ndarray) -> dict[str, Any]:
    """How ``model`` judges ``examples`` (rows of :func:`scene_examples`): markers in place
    called covered, in the frames without a hand and in those with one (where the hand's
    shadow or fingers may lie over a marker without covering a corner or its centre), and
    covered ones called in place (fractions, and how many markers each is of)."""
    odds = features(examples[:, 0], examples[:, 1]) @ np.asarray(model.weights) + model.bias
    called, covered, hand = odds > 0, examples[:, 2] > 0, examples[:, 3] > 0
    out: dict[str, Any] = {}
    for name, rows, wrong in (
        ("clear_in_place", ~covered & ~hand, called),
        ("hand_in_place", ~covered & hand, called),
        ("covered", covered, ~called),
    ):
        out[f"valid_{name}"] = int(rows.sum())
        out[f"valid_{name}_wrong"] = round(int((rows & wrong).sum()) / max(1, int(rows.sum())), 5)
    return out


def fit_still_look(
    recipe: dict[str, Any],
    seed: int,
    out: Path,
    workers: int | None = None,
    scenes: int | None = None,
) -> Path:
    """Render ``scenes`` (default: the recipe's), fit and write ``out/still_look.json``."""
    start = time.perf_counter()
    n = int(scenes or recipe["scenes"])
    n_valid = min(int(recipe["valid_scenes"]), max(1, n // 4))  # fewer for a small trial
    print(f"still-look: rendering {n} + {n_valid} scenes", flush=True)
    jobs = [(recipe, i, seed) for i in range(n)]
    valid_jobs = [(recipe, VALIDATION_START + i, seed) for i in range(n_valid)]
    train = np.concatenate(parallel_map(_job, jobs, workers, chunksize=4))
    valid = np.concatenate(parallel_map(_job, valid_jobs, workers, chunksize=4))
    render_s = time.perf_counter() - start
    w = fit_logistic(features(train[:, 0], train[:, 1]), train[:, 2])
    model = StillLook((float(w[0]), float(w[1])), float(w[2]))
    trained = {
        "seed": seed,
        "scenes": n,
        "games": list(recipe["games"]),
        "examples": len(train),
        "covered": int(train[:, 2].sum()),
        "render_seconds": round(render_s, 1),
        "date": time.strftime("%Y-%m-%d"),
        **figures(model, valid),
    }
    model = StillLook(model.weights, model.bias, trained)
    out.mkdir(parents=True, exist_ok=True)
    path = out / STILL_LOOK_FILE
    model.save(path)
    print(f"still-look: {trained} -> {path}", flush=True)
    return path
