"""The synthetic scene renderer: seeded, geometrically exact, and drawing what the truth says."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import data
from vision.geometry import load_geometry
from vision.synth import Domain, random_position, render_scene
from vision.synth.camera import Camera, intrinsics, look_at

GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")


def _detect(image: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = cv2.aruco.ArucoDetector(aruco, params).detectMarkers(gray)
    ids = [] if ids is None else ids.ravel()
    return {int(i): c.reshape(4, 2) for i, c in zip(ids, corners, strict=True)}


def _camera(tilt: float, azimuth: float, k: float) -> Camera:
    direction = np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), -1.0])
    rotation, translation = look_at(
        np.array([150.0, 150.0, 0.0]), direction * 500, np.array([0, 1.0, 0])
    )
    return Camera(intrinsics((1280, 960), 62), rotation, translation, (1280, 960), k)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    tilt=st.floats(0, 0.6),
    azimuth=st.floats(0, 6.3),
    k=st.floats(-0.03, 0.1),
    z=st.floats(-60, 0),
    x=st.floats(0, 300),
    y=st.floats(0, 300),
)
def test_camera_projection_agrees_with_the_homography_and_undistortion(tilt, azimuth, k, z, x, y):
    camera = _camera(tilt, azimuth, k)
    point = np.array([[x, y, z]])
    ideal = cv2.perspectiveTransform(point[None, :, :2], camera.homography(z))[0]
    assert camera.project_ideal(point) == pytest.approx(ideal, abs=1e-6)
    real = camera.project(point)
    assert camera.undistort(real) == pytest.approx(ideal, abs=1e-6)
    if k == 0:
        assert real == pytest.approx(ideal, abs=1e-9)


@pytest.mark.parametrize("k", [-0.03, 0.05, 0.1])
def test_opencv_coefficients_approximate_the_lens_model(k):
    camera = _camera(0.3, 1.0, k)
    u, v = np.meshgrid(np.linspace(0, 1279, 17), np.linspace(0, 959, 13))
    real = np.column_stack([u.ravel(), v.ravel()])
    ideal = cv2.undistortPoints(
        real[:, None], camera.matrix, camera.dist_coeffs, P=camera.matrix
    ).reshape(-1, 2)
    assert np.abs(ideal - camera.undistort(real)).max() < 1.0


def test_same_seed_same_picture_other_seed_other_picture():
    cells = random_position("gobblet", np.random.default_rng(3))
    a = render_scene("gobblet", cells, 11)
    b = render_scene("gobblet", cells, 11)
    c = render_scene("gobblet", cells, 12)
    assert a.image.shape == (960, 1280, 3) and a.image.dtype == np.uint8
    assert np.array_equal(a.image, b.image)
    assert a.hidden == b.hidden and a.occluded == b.occluded
    assert np.array_equal(a.homography, b.homography)
    assert not np.array_equal(a.image, c.image)


@pytest.mark.parametrize("game", ["gobblet", "spectrangle"])
def test_a_scene_kept_painted_for_the_next_board_gives_the_same_picture(game):
    # render_scene keeps the last seed's table, mat and board painted: boards filmed one after
    # another at one seed (a game at a table) must come out as each would alone
    rng = np.random.default_rng(8)
    first, second = random_position(game, rng), random_position(game, rng)
    domain = Domain.TRAIN
    alone = render_scene(game, first, 21, domain=domain).image
    render_scene(game, second, 21, domain=domain)
    again = render_scene(game, first, 21, domain=domain).image
    shifted = render_scene(game, first, 21, domain=domain, board_shift=(3.0, -2.0, 1.5)).image
    assert np.array_equal(alone, again)
    assert not np.array_equal(alone, shifted)
    assert np.array_equal(render_scene(game, first, 21, domain=domain).image, alone)


def test_random_positions_are_seeded():
    for game in GAMES:
        a = random_position(game, np.random.default_rng(5))
        assert a == random_position(game, np.random.default_rng(5))


@pytest.mark.parametrize("game", GAMES)
def test_cell_centres_are_the_homography_of_the_board_plane(game):
    geometry = load_geometry(game)
    centres = np.array([c.center for c in geometry.cells])
    for distortion in (0.0, None):
        scene = render_scene(game, {}, 7, hand=False, effects=False, distortion=distortion)
        ideal = cv2.perspectiveTransform(centres[None], scene.homography)[0]
        drawn = np.array([scene.cell_centers()[c.name] for c in geometry.cells])
        assert scene.camera.undistort(drawn) == pytest.approx(ideal, abs=1e-6)
        if distortion == 0.0:
            assert drawn == pytest.approx(ideal, abs=1e-6)
    h, w = scene.image.shape[:2]
    assert ((drawn >= 0) & (drawn < (w, h))).all()


@pytest.mark.parametrize("game", GAMES)
def test_markers_are_drawn_where_the_camera_projects_them(game):
    geometry = load_geometry(game)
    scene = render_scene(
        game,
        random_position(game, np.random.default_rng(1)),
        21,
        hand=False,
        effects=False,
        distortion=0.08,
        tilt_deg=35,
    )
    found = _detect(scene.image, geometry.aruco_dictionary)
    assert set(found) == set(geometry.marker_ids)
    errors = []
    for marker_id, corners in found.items():
        truth = scene.mat_camera.project(
            np.column_stack([geometry.marker(marker_id).corners(), np.zeros(4)])
        )
        errors.append(corners - truth)
    errors = np.concatenate(errors)
    assert np.abs(errors).max() < 1.5
    assert np.abs(errors.mean(axis=0)).max() < 0.3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_markers_survive_the_photographic_effects(seed):
    geometry = load_geometry("blokus")
    scene = render_scene(
        "blokus", random_position("blokus", np.random.default_rng(seed)), seed, hand=False
    )
    found = _detect(scene.image, geometry.aruco_dictionary)
    assert len(found) >= 4
    for marker_id, corners in found.items():
        truth = scene.mat_camera.project(
            np.column_stack([geometry.marker(marker_id).corners(), np.zeros(4)])
        )
        assert np.abs(corners - truth).max() < 4


def _hue_sat(image: np.ndarray, points: np.ndarray) -> np.ndarray:
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    px = np.round(points).astype(int)
    return hsv[px[:, 1], px[:, 0]].astype(int)


@pytest.mark.parametrize("game", ["blokus", "blokus-duo"])
def test_blokus_squares_show_their_colour(game):
    geometry = load_geometry(game)
    cells = random_position(game, np.random.default_rng(4))
    scene = render_scene(game, cells, 4, hand=False, effects=False)
    top = scene.surface_z - geometry.pieces["thickness"]
    for cell in geometry.cells:
        cx, cy = cell.center
        # a point between the glare spot at the centre and the square's edge
        hsv = _hue_sat(scene.image, scene.camera.project(np.array([[cx + 6.5, cy + 6.5, top]])))[0]
        content = cells[cell.name]
        if content is None:
            assert hsv[1] < 60, cell.name
        elif content == "orange":
            assert hsv[1] > 120 and 5 <= hsv[0] <= 25, cell.name
        else:
            assert hsv[1] > 80 and 125 <= hsv[0] <= 155, cell.name


#: OpenCV hue (0-180) ranges of the Spectrangle colours of the geometry file's look.
HUES = {
    "red": (170, 5),
    "yellow": (20, 35),
    "green": (55, 80),
    "blue": (100, 115),
    "purple": (135, 150),
}


def _hue_ok(hsv: np.ndarray, color: str) -> bool:
    if color == "white":
        return hsv[1] < 50 and hsv[2] > 150
    lo, hi = HUES[color]
    inside = lo <= hsv[0] <= hi if lo < hi else hsv[0] >= lo or hsv[0] <= hi
    return inside and hsv[1] > 100


def test_spectrangle_edges_carry_their_colours():
    geometry = load_geometry("spectrangle")
    cells = random_position("spectrangle", np.random.default_rng(9))
    scene = render_scene("spectrangle", cells, 9, hand=False, effects=False, tilt_deg=10)
    top = scene.surface_z - geometry.pieces["thickness"]
    checked = 0
    for cell in geometry.cells:
        content = cells[cell.name]
        if content is None:
            continue
        poly = np.asarray(cell.polygon)
        centre = poly.mean(axis=0)
        horizontal = next(i for i in range(3) if abs(poly[i, 1] - poly[(i + 1) % 3, 1]) < 1e-6)
        mids = {"base": (poly[horizontal] + poly[(horizontal + 1) % 3]) / 2}
        slanted = [(poly[i] + poly[(i + 1) % 3]) / 2 for i in range(3) if i != horizontal]
        mids["left"], mids["right"] = sorted(slanted, key=lambda m: m[0])
        for edge, mid in mids.items():
            point = centre + 0.6 * (mid - centre)
            hsv = _hue_sat(scene.image, scene.camera.project(np.array([[*point, top]])))[0]
            assert _hue_ok(hsv, content[edge]), (cell.name, edge, content[edge], hsv)
            checked += 1
    assert checked >= 30


def test_gobblet_pieces_stand_tall():
    """Parallax: the top of a tall dark piece is drawn where the camera sees its top, away from
    where the board plane's homography puts its cell centre."""
    geometry = load_geometry("gobblet")
    scene = render_scene(
        "gobblet", {"b2": {"color": "black", "size": 4}}, 3, hand=False, effects=False, tilt_deg=35
    )
    height = geometry.pieces["sizes"]["4"]["height"]
    cx, cy = geometry.cell("b2").center
    top = scene.camera.project(np.array([[cx, cy, scene.surface_z - height + 2]]))[0]
    base = scene.camera.project(np.array([[cx, cy, scene.surface_z]]))[0]
    assert np.linalg.norm(top - base) > 15
    gray = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
    assert gray[round(top[1]), round(top[0])] < 90
    empty = geometry.cell("c3").center
    floor = scene.camera.project(np.array([[*empty, scene.surface_z]]))[0]
    assert gray[round(floor[1]), round(floor[0])] > 90


def test_gobsmacked_tokens_show_their_motif():
    geometry = load_geometry("gobsmacked")
    cells = {"a1": "black-circle", "b1": "white-square", "c1": "white-circle", "d2": "black-square"}
    scene = render_scene("gobsmacked", cells, 5, hand=False, effects=False, tilt_deg=0)
    gray = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
    face = scene.surface_z - geometry.pieces["thickness"]
    for cell in geometry.cells:
        x, y = scene.camera.project(np.array([[*cell.center, face]]))[0]
        value = gray[round(y), round(x)]
        content = cells.get(cell.name)
        if content is None or content.startswith("black"):
            assert value < 70, cell.name  # an empty hole or a black motif
        else:
            assert value > 150, cell.name


@pytest.mark.parametrize("game", GAMES)
def test_a_hand_hides_cells_and_sets_occluded(game):
    cells = random_position(game, np.random.default_rng(2))
    with_hand = render_scene(game, cells, 31, hand=True, effects=False)
    without = render_scene(game, cells, 31, hand=False, effects=False)
    assert with_hand.occluded and with_hand.hidden
    assert with_hand.hidden < set(with_hand.cells)
    assert not without.occluded and not without.hidden
    centres = with_hand.cell_centers()
    changed = [
        np.abs(
            with_hand.image[round(y), round(x)].astype(int) - without.image[round(y), round(x)]
        ).max()
        for name, (x, y) in centres.items()
        if name in with_hand.hidden
    ]
    assert max(changed) > 40
    observation = with_hand.observation()
    assert observation["partial"] and observation["occluded"]
    assert set(observation["cells"]) == set(cells) - with_hand.hidden


def test_hands_come_and_go_with_the_seed():
    present = {
        render_scene("gobblet", {}, seed, effects=False).params["hand"] for seed in range(12)
    }
    assert present == {True, False}


def test_random_positions_hold_valid_contents():
    rng = np.random.default_rng(0)
    values = {"".join(sorted(code)) for code in data.load("spectrangle")["pieces"]}
    letters = {"red": "R", "green": "G", "blue": "B", "yellow": "Y", "purple": "P", "white": "W"}
    kinds = set(load_geometry("gobsmacked").pieces["motif"]["kinds"])
    for _ in range(20):
        for game in GAMES:
            cells = random_position(game, rng)
            assert set(cells) == set(load_geometry(game).cell_names)
            contents = [c for c in cells.values() if c is not None]
            if game == "gobblet":
                assert all(
                    c["color"] in ("white", "black") and 1 <= c["size"] <= 4 for c in contents
                )
            elif game.startswith("blokus"):
                assert set(contents) <= {"orange", "violet"}
            elif game == "gobsmacked":
                assert set(contents) <= kinds
            else:
                codes = [
                    "".join(sorted(letters[c[e]] for e in ("left", "right", "base")))
                    for c in contents
                ]
                assert set(codes) <= values and len(codes) == len(set(codes))


def test_gobblet_positions_top_no_more_of_a_piece_than_the_box_holds():
    from collections import Counter

    from vision.synth.positions import _gobblet_box, _gobblet_top

    stacks = data.load("gobblet")["stacks"]
    rng = np.random.default_rng(1)
    most = 0
    for _ in range(300):
        cells = random_position("gobblet", rng)
        counts = Counter((c["color"], c["size"]) for c in cells.values() if c is not None)
        assert max(counts.values(), default=0) <= stacks
        most = max(most, *counts.values(), 0)
    assert most == stacks  # full boards do use a piece of every stack
    # a piece the box has run out of gives way to the nearest size of its colour, the larger
    # of two as near, then to the other colour; the draws are the same either way
    box = _gobblet_box()
    box[("white", 2)] = 0
    streams = map(np.random.default_rng, range(99))
    plain = [(r.random() < 0.5, int(r.integers(1, 5))) for r in streams]
    got = [_gobblet_top(np.random.default_rng(s), Counter(box)) for s in range(99)]
    for (white, size), piece in zip(plain, got, strict=True):
        want = ("white" if white else "black", 3 if (white, size) == (True, 2) else size)
        assert (piece["color"], piece["size"]) == want
    box = Counter({key: 0 for key in box} | {("black", 1): 1})
    assert _gobblet_top(np.random.default_rng(0), box) == {"color": "black", "size": 1}
    assert sum(box.values()) == 0


def test_blokus_positions_cover_no_more_squares_of_a_colour_than_its_pieces_have():
    from collections import Counter

    from vision.synth.positions import _blokus

    for game in ("blokus", "blokus-duo"):
        squares = sum(len(p["squares"]) for p in data.load(game)["pieces"])
        names = load_geometry(game).cell_names
        rng = np.random.default_rng(2)
        for fill in (0.75, 1.0, 1.25):  # beyond the corpus's fill: every square of both colours
            counts = Counter(c for c in _blokus(game, names, fill, rng).values() if c)
            assert max(counts.values()) <= squares
        assert counts == {"orange": squares, "violet": squares}


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="no cells"):
        render_scene("gobblet", {"z9": None}, 0)
    with pytest.raises(ValueError, match="not a gobblet piece"):
        render_scene("gobblet", {"a1": "orange"}, 0)
    with pytest.raises(ValueError, match="even"):
        render_scene("gobblet", {}, 0, size=(641, 480))


@pytest.mark.parametrize("game", ["blokus", "gobblet", "spectrangle"])
def test_a_board_lies_where_its_shift_puts_it_and_the_mat_stays(game):
    geometry = load_geometry(game)
    on = render_scene(game, {}, 5, hand=False, effects=False, board_shift=(0.0, 0.0, 0.0))
    off = render_scene(game, {}, 5, hand=False, effects=False, board_shift=(3.0, -2.0, 1.0))
    marker = np.array([[*geometry.markers[0].center, 0.0]])
    assert np.allclose(on.mat_camera.project(marker), off.mat_camera.project(marker))
    # the board's frame moved: its cells are drawn elsewhere, by about the shift
    a, b = on.cell_centers(), off.cell_centers()
    moved = np.array([np.subtract(b[n], a[n]) for n in a])
    assert 2.0 < np.median(np.linalg.norm(moved, axis=1)) < 12.0
    assert off.params["board_shift"] == (3.0, -2.0, 1.0)
