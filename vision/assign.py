"""The best assignments of rows to columns, in NumPy.

Readers use :func:`best_assignment` (the Hungarian method) where the rules say a thing is on
the board at most once (a Spectrangle tile): of all the ways to give every cell a content with
no piece twice, the one of greatest likelihood; and :func:`best_within` (a min-cost flow) where
a box holds only so many of a piece (three Gobblet pieces of a colour and size, a Blokus
colour's squares).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

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
    within every capacity.

    Otherwise a min-cost flow of rows into columns, by successive shortest paths over the
    columns alone: from each row's best column, one row at a time leaves a column over its
    capacity along the cheapest chain of moves (a row from column a to column b costs
    ``score[a] - score[b]`` of it; a row moved earlier may move back) to a column with room.
    Few columns make each step cheap: O(excess x rows x columns) in all, where a one-to-one
    assignment over every column's slots is O(rows^2 x slots) (a Blokus Duo board read with more
    of a colour than its box holds took 0.26-0.44 s so, 5 ms now)."""
    score = np.asarray(score, dtype=np.float64)
    rows, columns = score.shape
    chosen = np.argmax(score, axis=1)
    limit = np.array([rows if c is None else c for c in capacity])
    counts = np.bincount(chosen, minlength=columns)
    if np.all(counts <= limit):
        return chosen
    if all(c is not None for c in capacity):
        raise ValueError("best_within needs a column without a limit")
    while np.any(counts > limit):
        cost, mover = _cheapest_moves(score, chosen)
        path = _shortest_paths(cost, counts > limit)
        room = np.flatnonzero(counts < limit)
        column = int(room[np.argmin(path.distance[room])])
        while path.previous[column] >= 0:  # back along the chain to a column over its limit
            source = int(path.previous[column])
            chosen[mover[source, column]] = column
            counts[source] -= 1
            counts[column] += 1
            column = source
    return chosen


def _cheapest_moves(score: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of columns (a, b), the least that moving a row now in ``a`` to ``b`` costs
    (inf where ``a`` holds none, and on the diagonal), and the row that costs it."""
    columns = score.shape[1]
    cost = np.full((columns, columns), np.inf)
    mover = np.zeros((columns, columns), dtype=int)
    for column in range(columns):
        held = np.flatnonzero(chosen == column)
        if not len(held):
            continue
        loss = score[held, column][:, None] - score[held]
        cheapest = loss.argmin(axis=0)
        cost[column] = loss[cheapest, np.arange(columns)]
        mover[column] = held[cheapest]
        cost[column, column] = np.inf
    return cost, mover


class _Paths(NamedTuple):
    distance: np.ndarray
    previous: np.ndarray


def _shortest_paths(cost: np.ndarray, sources: np.ndarray) -> _Paths:
    """Bellman-Ford from every column of ``sources`` at once over the move costs ``cost``
    (columns x columns; no cycle of moves gains anything while each step takes a shortest
    path): each column's distance and the column before it on its path (-1 at a source or
    out of reach)."""
    columns = len(cost)
    distance = np.where(sources, 0.0, np.inf)
    previous = np.full(columns, -1)
    for _ in range(columns):
        through = distance[:, None] + cost
        before = through.argmin(axis=0)
        shorter = through[before, np.arange(columns)]
        better = shorter < distance - 1e-12
        if not better.any():
            break
        distance[better] = shorter[better]
        previous[better] = before[better]
    return _Paths(distance, previous)
