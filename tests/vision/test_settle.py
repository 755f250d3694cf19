"""The settle filter on sequences of rectified boards: hands, noise, flicker and nudges; and the
pipeline, whose reader judges what is over a still board."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.models
from engine import new_game
from tests.vision.data.models import edited_models
from tests.vision.data.scenes import GEOMETRY, View, render, render_mat
from vision.locate import BoardLocator, BoardNotFound, rectify
from vision.settle import (
    BOARD_MOVED,
    MARKERS_HIDDEN,
    MOVING,
    NO_BOARD,
    OCCLUDED,
    SETTLED,
    UNCHANGED,
    Hints,
    Settler,
)
from vision.synth import random_position, render_scene

SIZE = 342  # mm, at 1 px/mm
PITCH = 55
ORIGIN = 61
FPS = 10
SKIN_BGR = (120, 150, 210)
SLEEVE_BGR = (90, 40, 30)
WOOD_BGR = (150, 190, 230)  # a light wooden piece: skin-like colour
BLACK_BGR = (40, 40, 40)


def cell_centre(col: int, row: int) -> tuple[int, int]:
    return ORIGIN + col * PITCH + PITCH // 2, ORIGIN + row * PITCH + PITCH // 2


def board(
    pieces: dict[tuple[int, int], tuple[tuple[int, int, int], int]] | None = None,
) -> np.ndarray:
    """A light board with a 4x4 grid; ``pieces`` maps (col, row) -> (colour, radius mm)."""
    image = np.full((SIZE, SIZE, 3), (200, 205, 210), np.uint8)
    for k in range(5):
        p = ORIGIN + k * PITCH
        cv2.line(image, (p, ORIGIN), (p, ORIGIN + 4 * PITCH), (90, 90, 90), 2)
        cv2.line(image, (ORIGIN, p), (ORIGIN + 4 * PITCH, p), (90, 90, 90), 2)
    for (col, row), (colour, radius) in (pieces or {}).items():
        cv2.circle(image, cell_centre(col, row), radius, colour, -1, cv2.LINE_AA)
    return image


def with_arm(
    image: np.ndarray, tip: tuple[int, int], skin=SKIN_BGR, sleeve=SLEEVE_BGR
) -> np.ndarray:
    """An arm reaching in from the bottom edge to ``tip``: sleeve, forearm, then a palm."""
    out = image.copy()
    start = (tip[0] + 40, SIZE + 60)
    mid = (int(start[0] * 0.4 + tip[0] * 0.6), int(start[1] * 0.4 + tip[1] * 0.6))
    cv2.line(out, start, mid, sleeve, 70)
    cv2.line(out, mid, tip, skin, 55)
    cv2.ellipse(out, tip, (38, 45), 20, 0, 360, skin, -1)
    return out


def camera(
    image: np.ndarray, rng: np.random.Generator, noise: float = 4.0, gain: float = 1.0
) -> np.ndarray:
    grain = rng.standard_normal(image.shape, dtype=np.float32) * noise
    return cv2.convertScaleAbs(cv2.scaleAdd(image.astype(np.float32), gain, grain))


def run(settler: Settler, frames, start: float = 0.0, hints=None):
    """Push ``frames`` at 10 fps; returns the states."""
    return [settler.push(start + k / FPS, frame, hints) for k, frame in enumerate(frames)]


def kinds(states) -> list[str]:
    return [s.kind for s in states]


def settled_board(
    settler: Settler, image: np.ndarray, rng, seconds: float = 1.0, start: float = 0.0
):
    """Let ``settler`` settle on ``image``; returns the states."""
    return run(settler, [camera(image, rng) for _ in range(round(seconds * FPS))], start)


# ------------------------------------------------------------------------------- the basic cycle
def test_a_move_is_judged_once_after_the_hand_has_left():
    rng = np.random.default_rng(1)
    settler = Settler(settle_time=0.4)
    before = board({(0, 0): (BLACK_BGR, 22)})
    after = board({(0, 0): (BLACK_BGR, 22), (2, 1): (BLACK_BGR, 18)})
    target = cell_centre(2, 1)
    first = settled_board(settler, before, rng)
    assert kinds(first).count(SETTLED) == 1
    assert first[0].kind == MOVING  # nothing to compare the very first frame with
    assert kinds(first)[-3:] == [UNCHANGED] * 3
    approach = [
        with_arm(before, (target[0], int(SIZE - k * (SIZE - target[1]) / 6))) for k in range(1, 7)
    ]
    # held still for less than the settle time: a resting hand is the reader's to see (below)
    hold = [with_arm(before, target)] + [with_arm(after, target)] * 2
    leave = [with_arm(after, (target[0], int(target[1] + k * 60))) for k in range(1, 4)]
    rest = [after] * 12
    frames = [camera(f, rng) for f in approach + hold + leave + rest]
    states = run(settler, frames, start=1.0)
    hand_frames = len(approach) + len(hold) + len(leave)
    assert all(s.kind == MOVING for s in states[:hand_frames])
    settled = [s for s in states if s.kind == SETTLED]
    assert len(settled) == 1
    still_since = 1.0 + hand_frames / FPS
    assert settled[0].t >= still_since + 0.4 - 1e-9
    assert settled[0].t <= still_since + 0.4 + 2 / FPS
    assert np.abs(settled[0].frame.astype(int) - after).mean() < 5  # the board with the piece
    assert kinds(states)[-3:] == [UNCHANGED] * 3


@pytest.mark.parametrize("settle_time", [0.2, 1.0])
def test_the_settle_time_is_configurable(settle_time):
    rng = np.random.default_rng(2)
    settler = Settler(settle_time=settle_time)
    states = settled_board(settler, board(), rng, seconds=1.6)
    settled = [s for s in states if s.kind == SETTLED]
    assert len(settled) == 1
    assert settled[0].still_for >= settle_time - 1e-9
    assert settled[0].still_for < settle_time + 1.5 / FPS


@pytest.mark.parametrize("game", ["gobblet", "blokus"])
def test_a_hand_resting_still_over_the_board_is_never_read(game):
    """The settle filter lets a perfectly still hand settle; the reader's foreign class sends
    the pipeline back to waiting, frame after frame, until the hand has gone."""
    from vision.pipeline import VisionPipeline

    cells = random_position(game, np.random.default_rng(21))
    clear = render_scene(game, cells, 21, hand=False).image
    covered = render_scene(game, cells, 21, hand=True)
    assert covered.hidden
    pipeline = VisionPipeline(game)
    first = [pipeline.process(clear, k / FPS).status for k in range(10)]
    assert first.count(SETTLED) == 1
    held = [pipeline.process(covered.image, 1.0 + k / FPS).status for k in range(20)]
    assert SETTLED not in held
    assert OCCLUDED in held
    after = [pipeline.process(clear, 3.0 + k / FPS).status for k in range(10)]
    # once the hand has left, the board is read once (the rules then see "no change")
    assert after.count(SETTLED) == 1


def test_a_look_again_is_not_used_up_by_a_read_with_a_hand_over_the_board(tmp_path, monkeypatch):
    # a model blind to every change once a board is accepted, and taking every board for one
    # with a hand over it: the players' "clear" gets each read through. The piece put down
    # reads as the accepted empty board; after look_again() a read found occluded does not use
    # the request up: the next read that counts is afresh, and shows the piece
    from vision.pipeline import VisionPipeline

    def blind(meta: dict) -> dict:
        return {**meta, "change_threshold": 1e9, "foreign_threshold": 0.0}

    monkeypatch.setattr(vision.models, "_chosen", edited_models(tmp_path / "m", "gobblet", blind))
    game = new_game("gobblet")
    piece = {"b2": {"color": "white", "size": 4}}
    empty, placed = (render_scene("gobblet", cells, 21, hand=False).image for cells in ({}, piece))
    pipeline = VisionPipeline("gobblet")
    clock = iter(k / FPS for k in range(1000))

    def read(image: np.ndarray, clear: bool):
        if clear:
            pipeline.read_next_as_clear()
        results = [pipeline.process(image, next(clock)) for _ in range(10)]
        return [r for r in results if r.status in (SETTLED, OCCLUDED) and r.pose is not None]

    (accepted,) = [r for r in read(empty, clear=True) if r.status == SETTLED]
    pipeline.calibrate(empty, accepted.pose, game.view())
    (unchanged,) = [r for r in read(placed, clear=True) if r.status == SETTLED]
    assert unchanged.observation.cells["b2"] is None  # the blind change test kept it empty
    pipeline.look_again()
    assert any(r.status == OCCLUDED for r in read(placed, clear=False))
    (afresh,) = [r for r in read(placed, clear=True) if r.status == SETTLED]
    assert afresh.observation.cells["b2"] == game.cell_from_json(piece["b2"])


def test_a_hand_that_leaves_a_barely_visible_change_is_read():
    rng = np.random.default_rng(33)
    settler = Settler()
    empty = board()
    settled_board(settler, empty, rng)
    run(settler, [camera(with_arm(empty, cell_centre(1, 2)), rng) for _ in range(3)], 1.0)
    faint = board({(1, 2): ((185, 192, 200), 8)})  # a small piece the board's own colour
    leave = run(settler, [camera(faint, rng) for _ in range(10)], 1.5)
    (read,) = [s for s in leave if s.kind == SETTLED]
    assert read.change <= settler.min_area  # too faint for the image difference alone


# ------------------------------------------------------------------------- what is not a change
def test_camera_noise_alone_is_not_motion():
    rng = np.random.default_rng(6)
    settler = Settler()
    image = board({(1, 1): (BLACK_BGR, 20), (3, 2): (WOOD_BGR, 24)})
    states = run(settler, [camera(image, rng, noise=6.0) for _ in range(40)])
    assert kinds(states).count(SETTLED) == 1
    assert all(s.kind == UNCHANGED for s in states[6:])
    assert max(s.motion for s in states[1:]) <= settler.min_area


def test_lighting_flicker_is_not_a_change():
    rng = np.random.default_rng(7)
    settler = Settler()
    image = board({(0, 3): (BLACK_BGR, 22), (2, 2): (WOOD_BGR, 22)})
    frames = [camera(image, rng, gain=rng.uniform(0.8, 1.2)) for _ in range(40)]
    states = run(settler, frames)
    assert kinds(states).count(SETTLED) == 1
    assert all(s.kind == UNCHANGED for s in states[6:])


@pytest.mark.parametrize(
    "piece",
    [(BLACK_BGR, 10), (WOOD_BGR, 10), (WOOD_BGR, 24)],
    ids=["small dark", "small wood", "large wood"],
)
def test_a_small_or_skin_like_piece_is_a_change_not_a_hand(piece):
    rng = np.random.default_rng(8)
    settler = Settler()
    empty = board()
    settled_board(settler, empty, rng)
    states = settled_board(settler, board({(3, 0): piece}), rng, start=1.0)
    assert OCCLUDED not in kinds(states)
    assert kinds(states).count(SETTLED) == 1


# ------------------------------------------------------------------------- hints and fallbacks
def test_hidden_markers_hold_the_board_back():
    rng = np.random.default_rng(9)
    settler = Settler()
    image = board()
    settled_board(settler, image, rng)
    held = run(settler, [camera(image, rng) for _ in range(10)], 1.0, Hints(markers_missing=1))
    assert all(s.kind == OCCLUDED and s.reason == MARKERS_HIDDEN for s in held)
    changed = board({(1, 3): (BLACK_BGR, 20)})
    released = run(settler, [camera(changed, rng) for _ in range(10)], 2.0, Hints())
    assert kinds(released)[:4] == [MOVING] * 4
    assert kinds(released).count(SETTLED) == 1


def test_a_still_picture_with_markers_unread_says_how_long_it_has_been_still():
    rng = np.random.default_rng(9)
    settler = Settler()
    image = board()
    settled_board(settler, image, rng)
    hints = Hints(markers_missing=1)
    held = run(settler, [camera(image, rng) for _ in range(10)], 1.0, hints)
    assert all(s.kind == OCCLUDED and s.reason == MARKERS_HIDDEN for s in held)
    still = [s.still_for for s in held]
    assert still == sorted(still) and still[-1] >= settler.settle_time
    # an arm moving over the board starts the clock again
    arm = [camera(with_arm(image, cell_centre(1, k % 4)), rng) for k in range(4)]
    moving = run(settler, arm, 2.0, hints)
    assert all(s.kind == OCCLUDED and s.still_for == 0.0 for s in moving[1:])


def test_a_marker_unread_on_a_still_board_asks_the_players_and_their_clear_reads_it():
    """A small, noisy marker the detector stops reading on a clear, still board: the pipeline
    waits as for a hand held still (STILL_OCCLUDED: the loop offers "OK if it is clear"), and
    once the players say it is clear, reads the board with that marker still unread."""
    from vision.geometry import load_geometry
    from vision.pipeline import STILL_OCCLUDED, VisionPipeline

    geometry = load_geometry("gobsmacked")
    before = render_scene("gobsmacked", {"d2": "white-square"}, 5, hand=False)
    after = {"d2": "white-square", "e2": "black-circle"}
    scene = render_scene("gobsmacked", after, 5, hand=False)
    marker = geometry.markers[-1]
    camera_ = scene.mat_camera or scene.camera
    corners = camera_.project(np.column_stack([marker.corners(), np.zeros(4)]))
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 3
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 3
    unread = scene.image.copy()
    unread[y0:y1, x0:x1] = unread[y0:y1, x0:x1].mean(axis=(0, 1))  # no longer a marker
    pipeline = VisionPipeline("gobsmacked")
    first = [pipeline.process(before.image, k / FPS) for k in range(10)]
    assert [r.status for r in first].count(SETTLED) == 1
    held = [pipeline.process(unread, 1.0 + k / FPS) for k in range(10)]
    assert all(r.status != SETTLED for r in held)
    assert held[-1].status == OCCLUDED and held[-1].reason == STILL_OCCLUDED
    assert marker.id in held[-1].pose.markers_missing
    pipeline.read_next_as_clear()
    (read,) = [r for k in range(10) if (r := pipeline.process(unread, 2.0 + k / FPS)).observation]
    assert read.status == SETTLED and not read.observation.occluded
    game = new_game("gobsmacked")
    assert read.observation.cells == {
        n: game.cell_from_json(after.get(n)) for n in read.observation.cells
    }
    assert set(read.observation.cells) == set(geometry.cell_names)


def test_a_moving_board_is_not_still():
    rng = np.random.default_rng(10)
    settler = Settler()
    image = board()
    settled_board(settler, image, rng)
    states = run(settler, [camera(image, rng) for _ in range(10)], 1.0, Hints(pose_shift_px=3.0))
    assert all(s.kind == MOVING and s.reason == BOARD_MOVED for s in states)


def test_no_board_is_occluded_and_restarts_the_clock():
    rng = np.random.default_rng(11)
    settler = Settler()
    image = board()
    states = run(settler, [camera(image, rng) for _ in range(3)])
    assert settler.push(0.3, None).reason == NO_BOARD
    states = run(settler, [camera(image, rng) for _ in range(8)], 0.4)
    settled = [s for s in states if s.kind == SETTLED]
    assert len(settled) == 1
    assert settled[0].t >= 0.4 + 0.4 - 1e-9  # the still period began when the board came back


def test_grey_images_work():
    rng = np.random.default_rng(13)
    settler = Settler()
    grey = [cv2.cvtColor(camera(board(), rng), cv2.COLOR_BGR2GRAY) for _ in range(10)]
    assert kinds(run(settler, grey)).count(SETTLED) == 1
    arm = cv2.cvtColor(with_arm(board(), cell_centre(2, 2)), cv2.COLOR_BGR2GRAY)
    states = run(settler, [arm] * 10, 1.0)
    assert states[0].kind == MOVING
    assert kinds(states).count(SETTLED) == 1


# ------------------------------------------------------------------------------- with the locator
@pytest.mark.parametrize("step_mm", [0.3, 2.0], ids=["creep", "nudge"])
def test_a_nudged_board_is_followed_and_not_a_move(step_mm):
    """Camera frames of the board sliding on the table, through locate -> rectify -> settle."""
    rng = np.random.default_rng(14)
    mat = render_mat(GEOMETRY)
    view = View.looking_at(tilt_deg=20, yaw_deg=10)
    locator, settler = BoardLocator([GEOMETRY]), Settler()
    states, previous = [], None
    views = [view] * 6 + [
        view.nudged(step_mm * k, step_mm * k / 2, step_mm * k / 4) for k in range(1, 9)
    ]
    views += [views[-1]] * 8
    for k, v in enumerate(views):
        frame = render(mat, GEOMETRY, v, rng)
        pose = locator.locate(frame, t=k / FPS)
        hints = Hints.from_pose(pose, previous)
        states.append(settler.push(k / FPS, rectify(frame, pose, 1.0), hints))
        previous = pose
    assert kinds(states).count(SETTLED) == 1
    assert kinds(states)[5] in (SETTLED, UNCHANGED)
    assert states[-1].kind == UNCHANGED
    if step_mm >= 2.0:
        assert any(s.reason == BOARD_MOVED for s in states[6:14])


NEW_PIECE = {
    "gobblet": {"color": "white", "size": 4},
    "blokus": "orange",
    "spectrangle": {"left": "red", "right": "yellow", "base": "red"},
    "gobsmacked": "black-circle",
}


@pytest.mark.parametrize(
    ("game", "use_hints"),
    [
        ("gobblet", True),
        ("gobblet", False),
        ("blokus", False),
        ("spectrangle", True),
        ("gobsmacked", False),
    ],
)
def test_a_rendered_move_settles_once_after_the_hand_has_left(game, use_hints):
    """Renderer photos (same camera and light): before, a hand, the hand and a new piece, after;
    without hints the hand is only motion to the settle filter."""
    seed = 5
    before = random_position(game, np.random.default_rng(seed))
    empty = next(name for name, content in before.items() if content is None)
    after = {**before, empty: NEW_PIECE[game]}
    shots = {
        (key, hand): render_scene(game, cells, seed, hand=hand).image
        for key, cells in (("before", before), ("after", after))
        for hand in (False, True)
    }
    script = [("before", False)] * 6 + [("before", True)] * 4 + [("after", True)] * 4
    script += [("after", False)] * 8
    rng = np.random.default_rng(seed)
    locator, settler = BoardLocator.for_game(game), Settler()
    states, previous = [], None
    for k, shot in enumerate(script):
        t = k / FPS
        try:
            pose = locator.locate(shots[shot], t=t)
        except BoardNotFound:
            states.append(settler.push(t, None))
            continue
        top_down = camera(rectify(shots[shot], pose.surface(), 1.0), rng, noise=2.0)
        hints = Hints.from_pose(pose, previous) if use_hints else None
        states.append(settler.push(t, top_down, hints))
        previous = pose
    assert kinds(states[:6]).count(SETTLED) == 1
    assert all(s.kind in (MOVING, OCCLUDED) for s in states[6:14])
    if use_hints:  # the hand hides markers; without hints the hand is only motion here
        assert OCCLUDED in kinds(states[6:14])
    settled = [s for s in states[14:] if s.kind == SETTLED]
    assert len(settled) == 1
    assert settled[0].t >= 1.4 + 0.4 - 1e-9
    assert states[-1].kind == UNCHANGED
