"""The path tracer (Mitsuba): its meshes, its scenes seen where their truth says, the same scene
from the same seed, labelled patches from a recipe that asks for it, the bench's traced split and
the one-line errors without Mitsuba or for a game it does not draw."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from firmware.cli import main
from vision.bench import bench_game
from vision.geometry import load_geometry
from vision.locate import BoardLocator
from vision.synth import Scene, traced
from vision.synth.pieces import _bell_profile
from vision.synth.positions import random_position
from vision.train.cli import recipes
from vision.train.dataset import reader_class, scene_patches

GEOMETRY = load_geometry("gobblet")


def test_a_turned_mesh_stands_on_its_plane_within_its_radius() -> None:
    profile = _bell_profile("bell")
    verts, faces = traced.turned_mesh(profile, (100.0, 50.0), 12.0, -10.0, 22.0, n=16)
    assert verts.shape == (16 * len(profile) + 1, 3)
    assert faces.shape == (2 * 16 * (len(profile) - 1) + 16, 3)
    assert faces.max() == len(verts) - 1  # the tip closes the top
    assert verts[:, 2].max() == pytest.approx(-10.0)  # up is -z
    assert verts[:, 2].min() == pytest.approx(-10.0 - 22.0 * profile[-1][0])
    reach = np.hypot(verts[:, 0] - 100.0, verts[:, 1] - 50.0)
    assert reach.max() == pytest.approx(12.0)


def test_a_profile_cut_at_its_head_shares_the_ring_where_they_meet() -> None:
    profile = _bell_profile("knob")
    below, above = traced.split_profile(profile, 0.6)
    assert below[-1] == above[0]
    assert all(t < 0.6 for t, _ in below[:-1]) and all(t >= 0.6 for t, _ in above)
    assert len(below) + len(above) == len(profile) + 1
    assert traced.split_profile(profile, 2.0) == (profile, ())


@pytest.fixture(scope="module")
def scene() -> Scene:
    cells = random_position("gobblet", np.random.default_rng(4))
    return traced.render_traced("gobblet", cells, 11, spp=2)


@pytest.mark.parametrize("game", traced.GAMES)
def test_a_traced_scene_is_seen_where_its_truth_says(game: str) -> None:
    cells = random_position(game, np.random.default_rng(4))
    scene = traced.render_traced(game, cells, 11, spp=1)
    assert scene.image.shape == (960, 1280, 3) and scene.image.dtype == np.uint8
    assert not scene.hidden and not scene.occluded and scene.cells.keys() >= cells.keys()
    assert scene.params["renderer"] == "mitsuba"
    geometry = load_geometry(game)
    pose = BoardLocator([geometry]).locate(scene.image, 0.0)
    centres = np.array([c.center for c in geometry.cells])
    seen = pose.surface().to_image(centres)
    drawn = scene.cell_centers()
    assert np.linalg.norm(seen - [drawn[c.name] for c in geometry.cells], axis=1).max() < 2.0


def test_the_same_seed_traces_the_same_scene(scene: Scene) -> None:
    again = traced.render_traced("gobblet", scene.cells, 11, spp=2)
    assert np.array_equal(again.image, scene.image)
    other = traced.render_traced("gobblet", scene.cells, 12, spp=2)
    assert not np.array_equal(other.image, scene.image)


def test_a_recipe_that_asks_for_traced_scenes_gets_them_labelled() -> None:
    recipe = {**recipes()["gobblet"], "traced": {"every": 2, "spp": 1}}
    cells = random_position("gobblet", np.random.default_rng([3, 0]))
    patches = scene_patches(recipe, 0, 3)  # index 0: traced
    assert len(patches.y) == len(GEOMETRY.cells)
    read = reader_class(recipe["reader"])
    want = [recipe["classes"].index(read.label(cells.get(c.name), "")) for c in GEOMETRY.cells]
    assert patches.y[np.argsort(patches.cell)].tolist() == want


def test_the_bench_s_traced_split_has_no_hands() -> None:
    r = bench_game("gobblet", 2, 2026, split="traced")
    assert (r.scenes, r.hand_scenes, r.not_found) == (2, 0, 0)
    assert 0.0 <= r.cell_accuracy <= 1.0 and 0 <= r.clear_flagged <= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "spectrangle"], "the path tracer draws gobblet, blokus, blokus-duo, not"),
        (["--misplaced"], "no boards laid off their outlines"),
    ],
)
def test_a_traced_split_it_cannot_draw_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "vision", "--splits", "traced", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_without_mitsuba_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    traced.mitsuba.cache_clear()
    monkeypatch.setitem(sys.modules, "mitsuba", None)  # import mitsuba raises ImportError
    with pytest.raises(traced.TracerMissing, match="pip install"):
        traced.render_traced("gobblet", {}, 1)
    traced.mitsuba.cache_clear()


def test_a_box_stands_on_its_plane_and_covers_its_square() -> None:
    verts, faces = traced.box_mesh(np.array([30.0, 40.0]), 9.7, -5.0, 2.6)
    assert verts.shape == (8, 3) and faces.shape == (12, 3)
    assert sorted(set(verts[:, 2].round(6))) == [-7.6, -5.0]
    assert np.ptp(verts[:, 0]) == pytest.approx(19.4) and verts[:, 1].mean() == pytest.approx(40)
    assert set(faces.ravel()) == set(range(8))
