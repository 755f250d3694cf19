"""Expected costs of a threshold under kernel density estimates (``vision.train.kernel``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.train.kernel import bandwidth, expected_costs


def test_the_bandwidth_is_silvermans_rule_of_thumb():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    # sd 1.581, IQR 2 / 1.34 = 1.493 the smaller
    assert bandwidth(x) == pytest.approx(0.9 * (2 / 1.34) * 5**-0.2)
    assert bandwidth(np.array([2.0, 2.0, 2.0])) == 0.0
    assert bandwidth(np.array([1.0, np.inf, 3.0])) == bandwidth(np.array([1.0, 3.0]))


def test_without_a_width_the_costs_are_counted_as_they_fall():
    t = np.array([0.0, 1.5, 2.5, 9.0])
    # one item of each kind: nothing to estimate a width from, so every group is a step
    costs = expected_costs(np.array([1.0, 2.0]), np.array([10.0, 0.0]), np.array([0.0, 1.0]), t)
    # below 1: item 0 above (free), item 1 above (1); between: both below; 2.5 on: item 0
    # below (10), item 1 below (free)
    assert costs.tolist() == [1.0, 11.0, 10.0, 10.0]


def test_a_lone_item_is_spread_as_wide_as_its_neighbours_group():
    rng = np.random.default_rng(5)
    clear = rng.normal(-3.0, 1.0, 200)
    scores = np.r_[clear, 0.5]
    below = np.r_[np.zeros(200), 10.0]
    above = np.r_[np.ones(200), 0.0]
    at_it = expected_costs(scores, below, above, np.array([0.5, 0.5 + 10 * bandwidth(clear)]))
    # at its own score the lone item is below the threshold half the time, far above always
    clear_part = expected_costs(clear, np.zeros(200), np.ones(200), np.array([0.5]))[0]
    assert at_it[0] - clear_part == pytest.approx(5.0, abs=1e-9)
    assert at_it[1] == pytest.approx(10.0, abs=1e-3)
    # items that cost nothing either way change nothing
    t = np.linspace(-5, 5, 11)
    more = expected_costs(np.r_[scores, 7.0], np.r_[below, 0.0], np.r_[above, 0.0], t)
    assert np.allclose(more, expected_costs(scores, below, above, t))


def test_smoothed_thresholds_cost_less_than_counted_ones_on_fresh_scenes():
    # scores of clear scenes (cost 1 at or above the threshold) and of scenes with a hand that
    # would be misread (cost 10 below it), drawn as a validation split of 400 and 150 is; the
    # threshold of least cost on each split is judged by what it costs on the distributions
    # the splits are drawn from
    t = np.linspace(-6.0, 6.0, 241)

    def phi(z: np.ndarray) -> np.ndarray:
        return 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))

    true_cost = 150 * 10 * phi(t - 3.5) + 400 * (1 - phi((t + 3.0) / 1.5))

    def chosen(costs: np.ndarray) -> int:
        best = np.flatnonzero(costs <= costs.min() + 1e-9)
        return int(best[len(best) // 2])

    counted, smoothed = [], []
    for draw in range(30):
        rng = np.random.default_rng([2026, draw])
        scores = np.r_[rng.normal(-3.0, 1.5, 400), rng.normal(3.5, 1.0, 150)]
        below = np.r_[np.zeros(400), np.full(150, 10.0)]
        above = np.r_[np.ones(400), np.zeros(150)]
        step = 10 * np.sum(scores[400:, None] < t, axis=0) + np.sum(scores[:400, None] >= t, axis=0)
        counted.append(true_cost[chosen(step)])
        smoothed.append(true_cost[chosen(expected_costs(scores, below, above, t))])
    assert np.mean(smoothed) < np.mean(counted)
    assert np.mean(smoothed) - true_cost.min() < 0.5 * (np.mean(counted) - true_cost.min())
