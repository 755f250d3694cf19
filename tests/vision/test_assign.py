"""The Hungarian assignment against every assignment of small random matrices."""

from __future__ import annotations

from itertools import permutations, product

import numpy as np
import pytest

from vision.assign import best_assignment, best_within


@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (3, 3), (4, 6), (5, 5), (5, 8), (6, 7)])
def test_the_assignment_is_one_to_one_and_the_best_of_all(shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(20):
        score = rng.normal(size=shape)
        score[rng.random(shape) < 0.2] = -30.0  # some impossible pairs, as log(0) floors are
        got = best_assignment(score)
        rows = np.arange(shape[0])
        assert len(set(got.tolist())) == shape[0]
        best = max(score[rows, list(p)].sum() for p in permutations(range(shape[1]), shape[0]))
        assert score[rows, got].sum() == pytest.approx(best)


def test_rows_that_want_the_same_column_share_it_out_by_what_the_others_lose():
    # both rows like column 0 best; row 1 loses less by taking column 1
    score = np.array([[0.0, -5.0, -6.0], [-0.1, -0.3, -9.0]])
    assert best_assignment(score).tolist() == [0, 1]


def test_more_rows_than_columns_is_refused():
    with pytest.raises(ValueError, match="3 rows"):
        best_assignment(np.zeros((3, 2)))


@pytest.mark.parametrize("capacity", [(None, 1, 1), (None, 2, 1), (1, None, 0), (None, None, 2)])
def test_contents_within_a_box_are_the_best_of_all_that_keep_to_it(capacity):
    rng = np.random.default_rng(len(str(capacity)))
    for _ in range(20):
        score = rng.normal(size=(5, 3))
        got = best_within(score, capacity)
        counts = np.bincount(got, minlength=3)
        assert all(c is None or counts[k] <= c for k, c in enumerate(capacity))
        rows = np.arange(5)
        best = max(
            score[rows, list(cols)].sum()
            for cols in product(range(3), repeat=5)
            if all(c is None or list(cols).count(k) <= c for k, c in enumerate(capacity))
        )
        assert score[rows, got].sum() == pytest.approx(best)
    # within the box, each row's own best stands
    score = np.array([[0.0, -1.0, -2.0], [-1.0, 0.0, -2.0]])
    assert best_within(score, (None, 1, 1)).tolist() == [0, 1]


@pytest.mark.parametrize(("rows", "capacity"), [(40, (None, 9, 7)), (30, (None, *[2] * 8))])
def test_contents_within_a_box_score_as_the_one_to_one_assignment_over_every_slot(rows, capacity):
    """Boards too big to try every way: the min-cost flow scores as the Hungarian method over
    one column per slot of the box (each column's capacity repeated), rows that mostly want a
    capped column (a board read all one colour) and log-probability floors among them."""
    rng = np.random.default_rng(rows)
    columns = len(capacity)
    for _ in range(10):
        score = rng.normal(size=(rows, columns))
        score[:, 1] += 2.0  # most rows like a capped column best
        score[rng.random(score.shape) < 0.2] = np.log(1e-12)
        got = best_within(score, capacity)
        counts = np.bincount(got, minlength=columns)
        assert all(c is None or counts[k] <= c for k, c in enumerate(capacity))
        slots = np.concatenate(
            [np.full(rows if c is None else c, k) for k, c in enumerate(capacity)]
        )
        reference = slots[best_assignment(score[:, slots])]
        every = np.arange(rows)
        assert score[every, got].sum() == pytest.approx(score[every, reference].sum())


def test_a_box_without_an_unlimited_column_is_refused_when_over():
    with pytest.raises(ValueError, match="without a limit"):
        best_within(np.array([[1.0, 0.0], [1.0, 0.0]]), (1, 1))
