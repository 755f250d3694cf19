"""The board geometry files: complete, consistent with the spec, reproducible from generate.py."""

from __future__ import annotations

import importlib.util
import itertools
import math

import cv2
import numpy as np
import pytest

from vision.geometry import BOARDS_DIR, available_games, load_geometry
from vision.mat import print_layout, quiet_square

GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")


def _squares(files: int, ranks: int) -> set[str]:
    return {f"{'abcdefghijklmnopqrstuvwxyz'[f]}{r + 1}" for f in range(files) for r in range(ranks)}


#: Cell names of shared/spec/observation.md, written out independently of the files.
SPEC_CELLS = {
    "gobblet": _squares(4, 4),
    "blokus": _squares(12, 12),
    "blokus-duo": _squares(14, 14),
    "spectrangle": {str(i) for i in range(36)},
    "gobsmacked": _squares(8, 3),
}


def _area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return float(area)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two disjoint polygons (closest vertex-to-edge pair)."""

    def to_edges(points: np.ndarray, polygon: np.ndarray) -> float:
        best = math.inf
        for p, q in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
            t = np.clip(((points - p) @ (q - p)) / ((q - p) @ (q - p)), 0, 1)
            best = min(
                best, float(np.linalg.norm(points - (p + t[:, None] * (q - p)), axis=1).min())
            )
        return best

    return min(to_edges(a, b), to_edges(b, a))


def test_every_game_has_a_geometry_file():
    assert set(GAMES) <= set(available_games())


@pytest.mark.parametrize("game", GAMES)
def test_cell_names_are_those_of_the_spec(game):
    names = load_geometry(game).cell_names
    assert len(names) == len(set(names))
    assert set(names) == SPEC_CELLS[game]


def test_marker_ids_are_disjoint_between_games():
    ids = {game: load_geometry(game).marker_ids for game in GAMES}
    for a, b in itertools.combinations(GAMES, 2):
        assert not ids[a] & ids[b], (a, b)


@pytest.mark.parametrize("game", GAMES)
def test_markers_fit_the_dictionary_the_mat_and_leave_the_board_free(game):
    geometry = load_geometry(game)
    assert 4 <= len(geometry.markers) <= 8
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, geometry.aruco_dictionary))
    assert max(geometry.marker_ids) < dictionary.bytesList.shape[0]
    quiet = print_layout(geometry)["quiet_zone"]
    (ox, oy), (w, h) = geometry.mat_origin, geometry.mat_size
    zones = [quiet_square(m, quiet) for m in geometry.markers]
    for zone in zones:
        assert zone[:, 0].min() >= ox and zone[:, 0].max() <= ox + w
        assert zone[:, 1].min() >= oy and zone[:, 1].max() <= oy + h
    for a, b in itertools.combinations(zones, 2):
        assert _overlap(a, b) == 0
    outline = np.asarray(geometry.extra["board"]["outline"])
    if geometry.extra["orientation"] == "flat":
        # the board's edge, seen from a tilted camera, must not hide a marker's quiet zone
        clearance = 1.5 * geometry.extra["board"]["thickness"] + 3
        for zone in zones:
            assert _overlap(zone, outline) == 0
            assert _distance(zone, outline) >= clearance
    else:  # stickers on the board's face, clear of the holes
        for zone in zones:
            assert _overlap(zone, outline) == pytest.approx(_area(zone), rel=1e-4)
            for cell in geometry.cells:
                assert _overlap(zone, np.asarray(cell.polygon)) == 0


@pytest.mark.parametrize("game", GAMES)
def test_cells_lie_on_the_board_without_overlapping(game):
    geometry = load_geometry(game)
    outline = np.asarray(geometry.extra["board"]["outline"])
    polygons = [np.asarray(c.polygon) for c in geometry.cells]
    for polygon in polygons:
        assert _overlap(polygon, outline) == pytest.approx(_area(polygon), rel=1e-4)
    for a, b in itertools.combinations(polygons, 2):
        assert _overlap(a, b) < 1e-6 * _area(a)


@pytest.mark.parametrize(
    ("game", "size", "pitch"),
    [("gobblet", 4, 55.0), ("blokus", 12, 20.0), ("blokus-duo", 14, 20.0)],
)
def test_square_boards_count_files_rightwards_and_ranks_upwards(game, size, pitch):
    geometry = load_geometry(game)
    files = "abcdefghijklmn"[:size]
    for f, r in itertools.product(range(size), range(1, size + 1)):
        x, y = geometry.cell(f"{files[f]}{r}").center
        x0, y0 = geometry.cell("a1").center
        assert x - x0 == pytest.approx(f * pitch)
        assert y0 - y == pytest.approx((r - 1) * pitch)
        assert _area(np.asarray(geometry.cell(f"{files[f]}{r}").polygon)) == pytest.approx(pitch**2)


def test_spectrangle_cells_follow_the_row_indexing_of_the_rules():
    geometry = load_geometry("spectrangle")
    for row in range(6):
        for k in range(2 * row + 1):
            poly = np.asarray(geometry.cell(str(row * row + k)).polygon)
            sides = np.linalg.norm(poly - np.roll(poly, -1, axis=0), axis=1)
            assert sides == pytest.approx([sides[0]] * 3, abs=1e-3)
            flat = [i for i in range(3) if abs(poly[i, 1] - poly[(i + 1) % 3, 1]) < 1e-6]
            assert len(flat) == 1
            apex_y = poly[(flat[0] + 2) % 3, 1]
            points_up = apex_y < poly[flat[0], 1]
            assert points_up == (k % 2 == 0)
            if k > 0:  # the cell before it in the row shares a slanted edge
                before = np.asarray(geometry.cell(str(row * row + k - 1)).polygon)
                assert (
                    len({tuple(p) for p in poly.round(3)} & {tuple(p) for p in before.round(3)})
                    == 2
                )
            if points_up and row < 5:  # the cell below shares the base
                below = np.asarray(geometry.cell(str((row + 1) ** 2 + k + 1)).polygon)
                assert (
                    len({tuple(p) for p in poly.round(3)} & {tuple(p) for p in below.round(3)}) == 2
                )


def test_gobsmacked_stands_upright_with_rank_three_on_top():
    geometry = load_geometry("gobsmacked")
    assert geometry.extra["orientation"] == "upright"
    assert (
        geometry.cell("a3").center[1]
        < geometry.cell("a2").center[1]
        < geometry.cell("a1").center[1]
    )
    assert geometry.cell("h1").center[0] > geometry.cell("a1").center[0]
    assert geometry.pieces["token_diameter"] == pytest.approx(30, abs=3)
    assert set(geometry.pieces["motif"]["kinds"]) == {
        "black-circle",
        "black-square",
        "white-circle",
        "white-square",
        "shape-joker",
        "colour-joker",
    }


def test_piece_sizes_are_physical():
    sizes = load_geometry("gobblet").pieces["sizes"]
    diameters = [sizes[str(s)]["diameter"] for s in range(1, 5)]
    heights = [sizes[str(s)]["height"] for s in range(1, 5)]
    assert diameters == sorted(diameters) and heights == sorted(heights)
    assert diameters[-1] < 55  # the biggest piece fits its square
    for game in ("blokus", "blokus-duo"):
        assert load_geometry(game).pieces["square"] <= 20
    spectrangle = load_geometry("spectrangle")
    poly = np.asarray(spectrangle.cell("0").polygon)
    assert spectrangle.pieces["tile_side"] < math.dist(poly[0], poly[1])


def test_the_committed_files_are_what_generate_py_writes():
    spec = importlib.util.spec_from_file_location("board_generator", BOARDS_DIR / "generate.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    boards = generator.all_boards()
    assert {b["game"] for b in boards} == set(GAMES)
    for board in boards:
        committed = (BOARDS_DIR / f"{board['game']}.json").read_text(encoding="utf-8")
        assert generator.dumps(board) == committed, board["game"]
