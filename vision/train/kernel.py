"""Expected costs of a threshold under kernel density estimates of scored items.

A threshold chosen by counting what it gets wrong on a validation split jumps with the one item
nearest it: one hand scene of 560 that looks a little foreign decided whether a Gobblet
network's flag was fitted at 0.61 or 0.91 (``docs/benchmarks.md``, "A flag threshold fitted
on expected costs"). Here every item's score is taken as a draw from a kernel around it (a
kernel density estimate of its group's scores), and a threshold costs what it would cost on
average. On splits drawn from known distributions the thresholds so chosen cost less than
counted ones (``tests/vision/test_kernel.py``); on resamples of one split they were measured
no steadier.
"""

from __future__ import annotations

import numpy as np


def bandwidth(x: np.ndarray) -> float:
    """Silverman's rule of thumb for the kernel's standard deviation over the scores ``x``:
    0.9 min(sd, IQR / 1.34) n^-1/5 (the sd alone when the IQR is 0) over its finite scores;
    0 for fewer than two distinct ones."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(np.unique(x)) < 2:
        return 0.0
    sd = float(np.std(x, ddof=1))
    iqr = float(np.subtract(*np.percentile(x, [75, 25])))
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    return 0.9 * spread * len(x) ** -0.2


def _below(t: np.ndarray, x: np.ndarray, h: float) -> np.ndarray:
    """P(score < t) for a score drawn from a logistic kernel of standard deviation ``h`` around
    each of ``x`` (one row a threshold); a step when ``h`` is 0."""
    d = t[:, None] - x[None, :]
    if h == 0:
        return (d > 0).astype(float)
    scale = h * np.sqrt(3.0) / np.pi
    return 0.5 * (1.0 + np.tanh(d / (2.0 * scale)))


def expected_costs(
    scores: np.ndarray, below: np.ndarray, above: np.ndarray, thresholds: np.ndarray
) -> np.ndarray:
    """At each of ``thresholds``, the expected total cost of the items: item ``i`` costs
    ``below[i]`` when its score falls below the threshold and ``above[i]`` when it reaches it.
    Items of the same two costs are one group, smoothed by a logistic kernel of the group's
    :func:`bandwidth`; a group too small to have one (fewer than two distinct scores) takes
    the widest of the others' (every group a step when none has one). Items that cost nothing
    either way are left out; scores are on the scale the kernel is meant for (a probability's
    logit, say); an infinite score is never below a threshold."""
    scores = np.asarray(scores, dtype=float)
    below = np.asarray(below, dtype=float)
    above = np.asarray(above, dtype=float)
    t = np.asarray(thresholds, dtype=float)
    keep = (below != 0) | (above != 0)
    costs = np.stack([below, above], axis=1)[keep]
    scores = scores[keep]
    groups, owner = np.unique(costs, axis=0, return_inverse=True)
    owner = owner.ravel()
    widths = [bandwidth(scores[owner == g]) for g in range(len(groups))]
    widest = max(widths, default=0.0)
    total = np.zeros(len(t))
    for g, (cost_below, cost_above) in enumerate(groups):
        x = scores[owner == g]
        p = _below(t, x, widths[g] or widest).sum(axis=1)
        total += cost_below * p + cost_above * (len(x) - p)
    return total
