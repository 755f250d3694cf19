"""The best one-to-one assignment of rows to columns (the Hungarian method), in NumPy.

Readers use it where the rules say a thing is on the board at most once (a Spectrangle tile):
of all the ways to give every cell a content with no piece twice, the one of greatest
likelihood; and, through :func:`best_within`, where a box holds only so many of a piece (three
Gobblet pieces of a colour and size, a Blokus colour's squares).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def best_assignment(score: np.ndarray) -> np.ndarray:
    """For a ``score`` matrix (rows x columns, rows <= columns, finite), the column of each row
    such that no column is used twice and the sum of the rows' scores is the greatest.

    The shortest augmenting path form of the Hungarian method (Kuhn, Munkres; potentials as in
    Jonker and Volgenant): O(rows^2 x columns), the inner loop over columns vectorised."""
    cost = -np.asarray(score, dtype=np.float64)
    n, m = cost.shape
    if n > m:
        raise ValueError(f"{n} rows cannot each have one of {m} columns")
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    owner = np.zeros(m + 1, dtype=int)  # 1-based row holding each column; 0: none
    way = np.zeros(m + 1, dtype=int)
    for row in range(1, n + 1):
        owner[0] = row
        col = 0
        slack = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[col] = True
            r = owner[col]
            free = ~used
            free[0] = False
            reduced = cost[r - 1] - u[r] - v[1:]
            better = free[1:] & (reduced < slack[1:])
            slack[1:][better] = reduced[better]
            way[1:][better] = col
            gaps = np.where(free, slack, np.inf)
            nxt = int(np.argmin(gaps))
            delta = gaps[nxt]
            held = np.flatnonzero(used)
            u[owner[held]] += delta
            v[held] -= delta
            slack[free] -= delta
            col = nxt
            if owner[col] == 0:
                break
        while col:
            prev = way[col]
            owner[col] = owner[prev]
            col = prev
    out = np.empty(n, dtype=int)
    taken = np.flatnonzero(owner[1:]) + 1
    out[owner[taken] - 1] = taken - 1
    return out


def best_within(score: np.ndarray, capacity: Sequence[int | None]) -> np.ndarray:
    """For a ``score`` matrix (rows x columns, finite), the column of each row such that no
    column ``k`` is used more than ``capacity[k]`` times (``None``: any number, and at least one
    column has no limit) and the sum of the rows' scores is the greatest: the likeliest
    contents when a box holds only so many of a piece. Each row's best column when that keeps
    within every capacity (no assignment then)."""
    best = np.argmax(score, axis=1)
    counts = np.bincount(best, minlength=score.shape[1])
    if all(c is None or counts[k] <= c for k, c in enumerate(capacity)):
        return best
    rows = len(score)
    slots = np.concatenate(
        [np.full(rows if c is None else min(c, rows), k) for k, c in enumerate(capacity)]
    )
    return slots[best_assignment(score[:, slots])]
