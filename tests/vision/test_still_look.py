"""The still run's test of a marker the detector did not read (:mod:`vision.still_look`) and its
fit (:mod:`vision.train.still_look`): how unlike its crop a marker looks, the committed model's
verdicts on scenes of the fit's kind it was not fitted on, and the fit itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.still_look import (
    StillLook,
    StillLookError,
    features,
    outline_mask,
    still_look,
    unlikeness,
)
from vision.train.cli import recipes
from vision.train.still_look import fit_logistic, scene_examples


def _marker(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A 30 px crop of a random 6x6-module black and white marker in a white margin, and the
    mask of the marker's outline in it."""
    bits = rng.integers(0, 2, (6, 6)) * 200 + 30
    crop = np.full((30, 30), 230.0)
    crop[3:27, 3:27] = np.kron(bits, np.ones((4, 4)))
    return crop, outline_mask(crop.shape, np.array([[3, 3], [27, 3], [27, 27], [3, 27]]))


def test_unlikeness_ignores_exposure_and_grows_with_noise_and_cover():
    rng = np.random.default_rng(1)
    crop, mask = _marker(rng)
    assert mask.sum() == pytest.approx(24 * 24, rel=0.1)
    assert unlikeness(crop, 0.6 * crop + 20, mask) == pytest.approx(0.0, abs=1e-9)
    noisy = [unlikeness(crop, crop + rng.normal(0, s, crop.shape), mask) for s in (2, 8, 32)]
    assert 0 < noisy[0] < noisy[1] < noisy[2] < 0.5
    assert unlikeness(crop, np.full_like(crop, 90.0), mask) == 1.0  # a flat card
    hand = crop.copy()
    hand[:, :20] = 150 + rng.normal(0, 3, (30, 20))  # two thirds under a hand
    assert unlikeness(crop, hand, mask) > noisy[2]


def test_the_committed_model_judges_a_marker_by_the_frames_own_noise():
    model = still_look()
    assert model.in_place(0.02, 0.02) and model.in_place(0.2, 0.2)
    assert not model.in_place(0.2, 0.005)  # far more unlike than this frame's noise makes it
    assert not model.in_place(1.0, 0.05)  # a card
    odds = [model.covered_odds(u, 0.02) for u in (0.01, 0.05, 0.2, 0.8)]
    assert odds == sorted(odds)


def test_the_committed_model_on_scenes_it_was_not_fitted_on():
    """The fit's kind of examples from scenes of other indices than its training and validation
    ones: the markers of a clear board filmed again are in place, all but a few of those a hand
    leaves uncovered too (its shadow may lie over them), and the markers a hand lies mostly over
    (half as like their crops as a flat card) are covered."""
    model, recipe = still_look(), recipes()["still-look"]
    rows = np.concatenate([scene_examples(recipe, 20_000_000 + i, 1) for i in range(10)])
    odds = features(rows[:, 0], rows[:, 1]) @ np.asarray(model.weights) + model.bias
    covered, hand = rows[:, 2] > 0, rows[:, 3] > 0
    assert (~covered & ~hand).sum() > 60 and (covered & (rows[:, 0] > 0.5)).sum() >= 3
    assert (odds[~covered & ~hand] <= 0).all()
    assert (odds[~covered & hand] <= 0).mean() >= 0.9
    assert (odds[covered & (rows[:, 0] > 0.5)] > 0).all()


def test_the_fit_separates_two_kinds_whatever_their_numbers():
    rng = np.random.default_rng(2)
    place = np.column_stack([rng.normal(-4, 0.5, 2000), rng.normal(-4, 0.5, 2000)])
    cover = np.column_stack([rng.normal(-1, 0.5, 40), rng.normal(-4, 0.5, 40)])
    x = np.concatenate([place, cover])
    y = np.concatenate([np.zeros(2000), np.ones(40)])
    w = fit_logistic(x, y)
    called = np.column_stack([x, np.ones(len(x))]) @ w > 0
    # balanced classes: the boundary lies between the two, not pushed into the rare one
    assert called[2000:].mean() >= 0.97 and (~called[:2000]).mean() >= 0.97


def test_the_model_file_round_trips_and_a_missing_one_says_what_to_do(tmp_path):
    model = still_look()
    model.save(tmp_path / "still_look.json")
    again = still_look(str(tmp_path))
    assert again.weights == pytest.approx(model.weights) and again.bias == pytest.approx(model.bias)
    data = json.loads((tmp_path / "still_look.json").read_text())
    with pytest.raises(ValueError, match="format"):
        StillLook.from_json({**data, "format": 99})
    with pytest.raises(StillLookError, match="referee train still-look"):
        still_look(str(tmp_path / "nowhere"))
