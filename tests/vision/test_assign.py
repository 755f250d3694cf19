"""The Hungarian assignment against every assignment of small random matrices."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from vision.assign import best_assignment


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
