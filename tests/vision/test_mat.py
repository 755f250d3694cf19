"""Printable mats: markers where the geometry says, true scale, a working scale-check ruler."""

from __future__ import annotations

import argparse
import re

import cv2
import numpy as np
import pytest
from PIL import Image

from vision.geometry import load_geometry
from vision.mat import MM_PER_INCH, cmd_mat, print_layout, render_mat, save_mat

GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")


def _detect(gray: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    corners, ids, _ = cv2.aruco.ArucoDetector(aruco, params).detectMarkers(gray)
    ids = [] if ids is None else ids.ravel()
    return {int(i): c.reshape(4, 2) for i, c in zip(ids, corners, strict=True)}


@pytest.mark.parametrize(("game", "dpi"), [(g, 150) for g in GAMES] + [("gobsmacked", 300)])
def test_detected_marker_corners_land_within_half_a_millimetre(tmp_path, game, dpi):
    geometry = load_geometry(game)
    path = save_mat(game, tmp_path / f"{game}.png", dpi=dpi)
    gray = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    found = _detect(gray, geometry.aruco_dictionary)
    assert set(found) == set(geometry.marker_ids)
    scale = dpi / MM_PER_INCH
    for marker_id, pixels in found.items():
        mm = (pixels + 0.5) / scale + np.asarray(geometry.mat_origin)
        error = np.linalg.norm(mm - geometry.marker(marker_id).corners(), axis=1)
        assert error.max() < 0.5, (marker_id, error)


@pytest.mark.parametrize("game", GAMES)
def test_pdf_page_is_the_mat_at_true_size(tmp_path, game):
    path = save_mat(game, tmp_path / f"{game}.pdf", dpi=100)
    text = path.read_bytes().decode("latin-1")
    match = re.search(r"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", text)
    assert match, "no page size in the PDF"
    width_mm, height_mm = (float(v) * MM_PER_INCH / 72 for v in match.groups())
    w, h = load_geometry(game).mat_size
    assert width_mm == pytest.approx(w, abs=0.3)
    assert height_mm == pytest.approx(h, abs=0.3)


def test_png_records_its_resolution_and_covers_the_mat(tmp_path):
    path = save_mat("gobblet", tmp_path / "mat.png", dpi=120)
    with Image.open(path) as image:
        assert image.info["dpi"] == pytest.approx((120, 120), abs=0.05)  # stored as pixels/m
        w, h = load_geometry("gobblet").mat_size
        assert image.size == (round(w * 120 / MM_PER_INCH), round(h * 120 / MM_PER_INCH))


@pytest.mark.parametrize("game", ["gobblet", "spectrangle", "gobsmacked"])
def test_ruler_ticks_span_100_mm(game):
    geometry = load_geometry(game)
    dpi = 200
    pixels = np.asarray(render_mat(geometry, dpi).convert("L"))
    scale = dpi / MM_PER_INCH
    x0, y0 = np.asarray(print_layout(geometry)["ruler"]) - np.asarray(geometry.mat_origin)
    # 2 mm above the baseline only the 5 mm and 10 mm ticks reach: 21 of them, 0 to 100 mm
    row = pixels[round((y0 - 2) * scale - 0.5), round((x0 - 3) * scale) : round((x0 + 103) * scale)]
    dark = (row < 160).astype(np.int8)
    starts = np.flatnonzero(np.diff(dark) == 1) + 1
    ends = np.flatnonzero(np.diff(dark) == -1) + 1
    centres = (starts + ends - 1) / 2 / scale
    assert len(centres) == 21
    assert np.diff(centres) == pytest.approx([5.0] * 20, abs=0.2)
    assert centres[-1] - centres[0] == pytest.approx(100, abs=0.2)


def test_sticker_template_outlines_the_board():
    geometry = load_geometry("gobsmacked")
    assert print_layout(geometry)["kind"] == "template"
    pixels = np.asarray(render_mat(geometry, 100).convert("L"))
    scale = 100 / MM_PER_INCH
    ox, oy = geometry.mat_origin
    # the board's left edge (x = 0 mm) is drawn as a dark line, half-way down the board
    column = pixels[round((110 - oy) * scale), : round((5 - ox) * scale)]
    assert column.min() < 100
    assert column[round((-5 - ox) * scale)] > 200


def test_cmd_mat_writes_the_file_and_reports_errors(tmp_path, capsys):
    out = tmp_path / "gobblet.png"
    assert cmd_mat(argparse.Namespace(game="gobblet", out=str(out), dpi=50)) == 0
    w, h = load_geometry("gobblet").mat_size
    assert out.exists() and f"{w:g} x {h:g} mm" in capsys.readouterr().out
    bad_suffix = argparse.Namespace(game="gobblet", out=str(tmp_path / "mat.jpg"), dpi=50)
    assert cmd_mat(bad_suffix) == 2
    unknown = argparse.Namespace(game="chess", out=str(tmp_path / "chess.png"), dpi=50)
    assert cmd_mat(unknown) == 2
    assert "referee:" in capsys.readouterr().err
