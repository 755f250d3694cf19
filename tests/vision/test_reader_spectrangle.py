"""The Spectrangle reader on seeded synthetic scenes, through the real localiser.

Thresholds come from the product's targets (per-cell accuracy >= 99.9 %, whole board >= 99 %),
loosened only by what a 40-scene sample can resolve (one board in 40).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from vision.geometry import load_geometry
from vision.locate import BoardPose
from vision.readers import reader_for
from vision.readers.spectrangle import COLOURS, OFF_HUE, SpectrangleReader, placements
from vision.synth import random_position, render_scene

from .reader_corpus import corpus, locate, read_right, truth

GAME = "spectrangle"
SCENES = 40
SEED = 4242


def _truth(cells: dict) -> dict:
    return truth(GAME, cells)


def _pose(image: np.ndarray) -> BoardPose:
    return locate(GAME, image)


def _corpus() -> tuple:
    """(scene, pose, observation) of SCENES seeded scenes, about 40 % with a hand."""
    return corpus(GAME, SCENES, SEED)


def _board_right(scene, obs) -> bool:
    return read_right(GAME, scene, obs)


def test_the_registry_gives_the_spectrangle_reader():
    reader = reader_for(GAME)
    assert isinstance(reader, SpectrangleReader)
    assert reader.game == GAME


def test_placements_are_every_order_of_the_36_real_pieces():
    layouts = placements()
    assert len(layouts) == len(set(layouts))
    pieces = Counter("".join(sorted(p)) for p in layouts)
    assert len(pieces) == 36
    # one-colour pieces lie one way, two-colour pieces three ways, three-colour pieces six
    assert sorted(Counter(pieces.values()).items()) == [(1, 6), (3, 20), (6, 10)]


def test_visible_cells_are_read_accurately():
    right = total = 0
    for scene, _, obs in _corpus():
        truth = _truth(scene.cells)
        for name, content in truth.items():
            if name not in scene.hidden:
                total += 1
                right += obs.cells.get(name, "missing") == content
    assert total > 1000
    assert right / total >= 0.999


def test_whole_boards_are_read_accurately():
    boards = [_board_right(scene, obs) for scene, _, obs in _corpus()]
    assert sum(boards) >= len(boards) - 1


def test_a_hand_over_the_board_is_flagged_and_its_cells_left_out():
    hands = 0
    for scene, _, obs in _corpus():
        assert obs.occluded == scene.occluded
        if not scene.occluded:
            assert not obs.partial
            assert len(obs.cells) == 36
            continue
        hands += 1
        truth = _truth(scene.cells)
        wrong = [n for n in scene.hidden if n in obs.cells and obs.cells[n] != truth[n]]
        assert not wrong, f"scene {scene.seed}: hidden cells reported wrongly: {wrong}"
        if scene.hidden:
            assert obs.partial
            assert set(obs.cells) < set(truth)
    assert hands >= 8


def test_probabilities_are_normalised_and_put_their_mass_on_the_truth():
    mass = []
    for scene, _, obs in _corpus():
        truth = _truth(scene.cells)
        for name, probs in obs.probabilities.items():
            assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)
            assert obs.confidence[name] == pytest.approx(max(probs.values()))
            assert obs.cells[name] == max(probs, key=probs.get)
            if name not in scene.hidden:
                mass.append(probs.get(truth[name], 0.0))
    assert np.mean(mass) >= 0.98
    assert np.mean(np.asarray(mass) >= 0.5) >= 0.999


def test_no_piece_is_read_on_two_cells():
    for _, _, obs in _corpus():
        pieces = ["".join(sorted(c)) for c in obs.cells.values() if c is not None]
        assert len(pieces) == len(set(pieces))


def test_glare_keeps_a_colours_hue_and_skin_turns_it():
    reader = reader_for(GAME)
    classes = reader.classes
    red = COLOURS.index("red")
    mu = classes.means[red]
    kept = np.full(4, 0.25)
    across = np.array([-mu[1], mu[0]]) / np.linalg.norm(mu[:2])
    washed = kept[0] * mu[:2]
    medians = np.array(
        [
            [*washed, mu[2] + 0.5],  # red washed out along its own hue by glare
            [*(washed - 0.03 * across), mu[2] + 0.5],  # bent by its saturated red channel
            [*(washed + 0.06 * across), mu[2] + 0.5],  # turned towards orange: skin
            [-0.06, 0.15, mu[2] + 0.5],  # a hand's usual look
        ]
    )
    off = reader._off_hue(classes, np.full(4, red), medians, kept, np.full((4, 3), 1e-6))
    assert off[0] < 1.0
    assert off[1] == 0.0
    assert off[2] > OFF_HUE
    assert off[3] > OFF_HUE


def test_an_empty_board_reads_empty_in_dim_and_warm_light():
    scene = render_scene(GAME, {}, 99, hand=False)
    reader = reader_for(GAME)
    warm = np.clip(scene.image * np.array([0.55, 0.75, 0.95]), 0, 255).astype(np.uint8)
    for image in (scene.image, warm):
        obs = reader.read(image, _pose(image))
        assert not obs.occluded
        assert obs.cells == dict.fromkeys(obs.cells, None)
        assert len(obs.cells) == 36


def test_calibration_holds_under_a_change_of_light():
    rng = np.random.default_rng(7)
    cells = random_position(GAME, rng)
    truth = _truth(cells)
    reader = reader_for(GAME)
    first = render_scene(GAME, cells, 701, hand=False)
    reader.calibrate(first.image, _pose(first.image), truth)
    right = total = 0
    for seed in (702, 703, 704, 705):
        scene = render_scene(GAME, cells, seed, hand=False)
        # the light turns warm and dim after calibration
        image = np.clip(scene.image * np.array([0.6, 0.8, 1.0]), 0, 255).astype(np.uint8)
        obs = reader.read(image, _pose(image))
        assert not obs.occluded
        right += sum(obs.cells[n] == c for n, c in truth.items())
        total += len(truth)
    assert right / total >= 0.99


def test_calibration_learns_the_real_colours_of_the_pieces():
    rng = np.random.default_rng(11)
    cells = random_position(GAME, rng)
    scene = render_scene(GAME, cells, 1101, hand=False)
    reader = reader_for(GAME)
    before = reader.classes.means.copy()
    reader.calibrate(scene.image, _pose(scene.image), _truth(cells))
    learned = reader.classes.learned
    assert learned.any()
    assert not np.allclose(before[learned], reader.classes.means[learned])


def test_calibration_corrects_nominal_colours_that_differ_from_the_real_pieces():
    geometry = load_geometry(GAME)
    look = dict(geometry.extra["look"])
    # a box whose purple is redder and whose green is yellower than the geometry file says
    look["pieces"] = dict(look["pieces"], purple="#c0406a", green="#70b030")
    reader = SpectrangleReader(
        dataclasses.replace(geometry, extra={**geometry.extra, "look": look})
    )
    rng = np.random.default_rng(7)
    cells = random_position(GAME, rng)
    truth = _truth(cells)
    assert any(c is not None and ("P" in c or "G" in c) for c in truth.values())

    def accuracy() -> float:
        right = 0
        for seed in (702, 703, 704):
            scene = render_scene(GAME, cells, seed, hand=False)
            obs = reader.read(scene.image, _pose(scene.image))
            right += sum(obs.cells.get(n, "missing") == c for n, c in truth.items())
        return right / (3 * len(truth))

    before = accuracy()
    first = render_scene(GAME, cells, 701, hand=False)
    reader.calibrate(first.image, _pose(first.image), truth)
    after = accuracy()
    assert after >= 0.99
    assert after > before
