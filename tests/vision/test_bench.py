"""How the vision bench judges one reading (the rule of the labelled photos)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import Observation, new_game
from vision.bench import (
    LIGHT_CONDITIONS,
    bench_game,
    board_errors,
    corpus_scene,
    hand_scene_right,
    light_conditions,
)
from vision.geometry import load_geometry
from vision.synth import Domain, render_scene

GEOMETRY = load_geometry("gobblet")
EMPTY = dict.fromkeys(GEOMETRY.cell_names)


def _obs(cells: dict, occluded: bool = False) -> Observation:
    return Observation(game="gobblet", cells=cells, occluded=occluded, partial=len(cells) < 16)


def test_a_clear_board_flagged_is_wrong():
    errors = board_errors(GEOMETRY, EMPTY, (), False, _obs(EMPTY, occluded=True))
    assert errors and errors.false_hand
    assert "clear board flagged" in errors.describe()


def test_a_hand_not_flagged_is_right_when_every_cell_is():
    errors = board_errors(GEOMETRY, EMPTY, {"a1"}, True, _obs(EMPTY))
    assert errors.missed_hand and not errors


def test_a_cell_under_a_hand_reported_wrong_is_wrong():
    piece = new_game("gobblet").cell_from_json({"color": "white", "size": 2})
    seen = {**EMPTY, "a1": piece}
    errors = board_errors(GEOMETRY, EMPTY, {"a1"}, True, _obs(seen))
    assert errors.hidden_wrong == ("a1",)


def test_a_visible_cell_left_out_away_from_the_hand_is_wrong():
    shown = {k: v for k, v in EMPTY.items() if k != "d4"}
    errors = board_errors(GEOMETRY, EMPTY, {"a1"}, True, _obs(shown, occluded=True))
    assert errors.left_out == ("d4",)


def test_a_hand_scene_is_right_when_flagged_or_when_read_right_on_every_cell():
    piece = new_game("gobblet").cell_from_json({"color": "white", "size": 2})
    wrong = {**EMPTY, "a1": piece}
    assert hand_scene_right(EMPTY, {"a1"}, _obs(wrong, occluded=True))  # the referee waits
    assert hand_scene_right(EMPTY, {"a1"}, _obs(EMPTY))  # nothing the hand hides is misread
    assert not hand_scene_right(EMPTY, {"a1"}, _obs(wrong))  # a wrong board would be judged
    partial = {k: v for k, v in wrong.items() if k != "a1"}
    assert hand_scene_right(EMPTY, {"a1"}, _obs(partial))  # the hidden cell left out
    assert not hand_scene_right(EMPTY, {"a1", "b1"}, _obs(partial))  # b1 hidden yet reported


def test_the_rendered_bench_reports_the_targets_by_the_photos_rule():
    r = bench_game("gobblet", 4, 2026)  # seeded: three clear scenes, one with a hand
    assert (r.scenes, r.hand_scenes) == (4, 1)
    assert 0.0 <= r.clear_boards <= 1.0 and 0 <= r.clear_flagged <= 3
    assert 0 <= r.hand_flagged <= 1
    figures = r.to_json()
    assert {"clear_boards", "clear_flagged", "hand_flagged"} <= figures.keys()
    # the corpus's light is plain: every clear scene counts there, none washed out
    assert figures["clear_by_light"]["plain"]["scenes"] == 3
    assert figures["clear_by_light"]["broad_glare"]["scenes"] == 0


@pytest.mark.parametrize(
    ("broad", "white", "expected"),
    [
        (1.0, 0.0, ("broad_glare",)),
        (0.0, 1.0, ("path_to_white",)),
        (1.0, 1.0, ("broad_glare", "path_to_white")),
        (0.0, 0.0, ("plain",)),
    ],
)
def test_a_scene_knows_the_light_that_washed_its_pieces_out(broad, white, expected):
    domain = replace(Domain.HELDOUT, broad_glare=broad, desaturate_chance=white)
    scene = render_scene("blokus", {}, 7, hand=False, domain=domain)
    assert light_conditions(scene) == expected


def test_the_held_out_bench_counts_every_clear_scene_by_its_light():
    r = bench_game("blokus-duo", 6, 2026, split="heldout")
    light = r.to_json()["clear_by_light"]
    scenes = [corpus_scene("blokus-duo", i, 2026, split="heldout") for i in range(6)]
    for name in LIGHT_CONDITIONS:
        clear = [s for s in scenes if not s.occluded and name in light_conditions(s)]
        assert light[name]["scenes"] == len(clear)
        assert 0 <= light[name]["right"] <= len(clear)
    assert sum(v["scenes"] for v in light.values()) >= r.scenes - r.hand_scenes


def test_the_bench_counts_the_pieces_of_clear_unflagged_scenes_by_the_kind_of_their_set():
    r = bench_game("gobblet", 8, 2026, split="heldout")
    by_set = r.to_json()["pieces_by_set"]
    scenes = [corpus_scene("gobblet", i, 2026, split="heldout") for i in range(8)]
    clear = [s for s in scenes if not s.occluded]
    assert set(by_set) <= {s.params["piece_set"] for s in clear}
    on_clear = sum(sum(v is not None for v in s.cells.values()) for s in clear)
    counted = sum(v["pieces"] for v in by_set.values())
    # a flagged scene's pieces are not counted: the referee waits, nothing is misread
    assert counted <= on_clear
    if r.clear_flagged == 0 and r.not_found == 0:
        assert counted == on_clear
    assert all(0 <= v["misread"] <= v["pieces"] for v in by_set.values())
    # a misread piece fails its board
    misread = sum(v["misread"] for v in by_set.values())
    assert misread <= round((1 - r.clear_boards) * len(clear)) * 16
