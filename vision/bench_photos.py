"""``referee bench vision --photos DIR``: the vision benchmark on labelled photos.

A labelled photo is ``NAME.jpg`` (or ``.png``) beside ``NAME.json`` with at least ``game``,
``cells`` (the true position, every cell, in the observation format), ``occluded`` (a hand is in
the scene) and ``occluded_cells`` (the cells it hides): the format of ``vision-samples``, and of
the frames the appliance saves with ``[record] frames = true``. Every ``*.json`` under ``DIR``
(searched recursively) is taken for a label; one that cannot be used (no photo beside it, not an
image, not a label, an unknown game or cell) is reported in one line and skipped.

Each photo is read as :func:`vision.bench.timed_read` reads a corpus scene (a fresh locator,
the game's reader, one OpenCV thread) and scored with the corpus bench's keys and meanings
(:class:`vision.bench.VisionBench`), but for these:

- ``hand_scenes``: every photo labelled ``occluded`` (found or not);
- ``markers_visible``: the geometry's markers but those the label's optional
  ``occluded_markers`` lists (a photo shows the whole mat);
- ``false_settled``: hand scenes read neither occluded nor partial (the pipeline would take the
  still frame for a settled board) and not right on every cell: a wrong board judged;
- ``locate_px`` / ``locate_px_p90``: over the photos whose label gives the ``camera`` (``K``,
  ``R``, ``t`` with X_cam = R X_mat + t, mm, and ``dist`` if any) and the ``board`` as it lies
  (turned ``rot_deg`` about the middle of its outline's corners and moved ``shift_mm`` off its
  outline on the mat, its face ``top_mm`` above the mat); NaN when none does.

and these more, where a photo is *right* as ``vision-samples/README.md`` says (a clear scene
read right on every cell; a scene with a hand read occluded, or partial with the hidden cells
left out, or right on every cell):

- ``clear_boards``: the fraction of the clear scenes read right;
- ``clear_flagged``: clear scenes read occluded or partial (the referee would never judge them);
- ``hand_flagged``: hand scenes read right (flagged, or right on every cell);
- ``misread_reported``: the fraction of the cells reported (over every photo) that are wrong.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine import GAMES, FormatError, new_game
from engine.core import Content

from .bench import BENCH_GAMES, VisionBench, board_errors, hand_scene_right, timed_read
from .geometry import BoardGeometry, load_geometry
from .locate import BoardNotFound
from .placement import rigid
from .readers import reader_for

#: What a photo beside a label may be called (the first one found is read).
PHOTO_SUFFIXES = (".jpg", ".png", ".jpeg")
#: The keys every label has.
LABEL_KEYS = ("game", "cells", "occluded", "occluded_cells")


class LabelError(ValueError):
    """A label or photo that cannot be used; the message says why, in a few words."""


@dataclass(frozen=True, eq=False)
class Photo:
    """One labelled photo: where it is, the true contents, the cells under a hand, and (when
    the label gives the camera and the board) where each cell's centre was drawn (Nx2 px, in
    the geometry's cell order)."""

    path: Path
    game: str
    truth: dict[str, Content]
    hidden: frozenset[str]
    occluded: bool
    drawn: np.ndarray | None = None
    #: the markers in view: the geometry's, but those the label's ``occluded_markers`` lists
    markers: frozenset[int] = frozenset()


@dataclass(frozen=True)
class PhotoBench:
    """One game's figures on labelled photos: the corpus bench's and the photos' own."""

    figures: VisionBench
    misread_reported: float
    #: (photo, what went wrong) of every photo not read right
    failures: tuple[tuple[Path, str], ...] = ()

    def to_json(self) -> dict[str, float | int]:
        """The per-game object of ``referee bench vision --photos DIR --json``."""
        return {
            **self.figures.to_json(),
            "misread_reported": round(self.misread_reported, 6),
        }


def find_labels(folder: Path) -> list[Path]:
    """Every ``*.json`` under ``folder`` (recursively), in path order."""
    return sorted(p for p in Path(folder).rglob("*.json") if p.is_file())


def load_label(label: Path) -> Photo:
    """The photo that ``label`` describes; :class:`LabelError` if it cannot be used."""
    try:
        data = json.loads(label.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabelError(f"cannot read it: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise LabelError("not valid JSON") from None
    if not isinstance(data, dict) or any(k not in data for k in LABEL_KEYS):
        missing = [k for k in LABEL_KEYS if not isinstance(data, dict) or k not in data]
        raise LabelError(f"not a photo label: no {', '.join(missing)}")
    game = data["game"]
    if not isinstance(game, str) or game not in GAMES:
        raise LabelError(f"unknown game {game!r}")
    photo = next((p for s in PHOTO_SUFFIXES if (p := label.with_suffix(s)).is_file()), None)
    if photo is None:
        raise LabelError(f"no photo {label.stem}.jpg or {label.stem}.png beside it")
    geometry = load_geometry(game)
    truth = _truth(game, geometry, data["cells"])
    hidden = data["occluded_cells"]
    if not (
        isinstance(hidden, list)
        and all(isinstance(n, str) for n in hidden)
        and set(hidden) <= truth.keys()
    ):
        raise LabelError(f"occluded_cells must list {game} cells, not {hidden!r}")
    if not isinstance(data["occluded"], bool):
        raise LabelError(f"occluded must be true or false, not {data['occluded']!r}")
    drawn = None
    if "camera" in data and "board" in data:
        try:
            drawn = drawn_centres(geometry, data["camera"], data["board"])
        except (KeyError, TypeError, ValueError, cv2.error) as exc:
            raise LabelError(f"camera or board unusable: {exc!r}") from None
    covered = data.get("occluded_markers", [])
    if not isinstance(covered, list):
        raise LabelError(f"occluded_markers must list marker ids, not {covered!r}")
    markers = geometry.marker_ids - set(covered)
    return Photo(photo, game, truth, frozenset(hidden), data["occluded"], drawn, markers)


def _truth(game: str, geometry: BoardGeometry, cells: Any) -> dict[str, Content]:
    """The label's ``cells`` as canonical contents, every cell of the board required."""
    if not isinstance(cells, dict):
        raise LabelError("cells must be an object")
    names = geometry.cell_names
    unknown = sorted(set(cells) - set(names))
    missing = [n for n in names if n not in cells]
    if unknown or missing:
        what = f"unknown cells {' '.join(unknown)}" if unknown else f"no {' '.join(missing)}"
        raise LabelError(f"cells must give every {game} cell: {what}")
    codec = new_game(game)
    truth = {}
    for name in names:
        try:
            truth[name] = codec.cell_from_json(cells[name])
        except FormatError as exc:
            raise LabelError(f"cell {name}: {exc}") from None
    return truth


def drawn_centres(
    geometry: BoardGeometry, camera: Mapping[str, Any], board: Mapping[str, Any]
) -> np.ndarray:
    """Image px (Nx2, geometry order) of every cell's centre on the board's face, from a
    label's ``camera`` (``K``, ``R``, ``t`` in the mat's frame, optional ``dist``) and ``board``
    (``shift_mm``, ``rot_deg`` about the middle of the outline's corners, ``top_mm``)."""
    outline = np.asarray(geometry.extra["board"]["outline"], dtype=np.float64).reshape(-1, 2)
    placement = rigid(*board["shift_mm"], board["rot_deg"], outline.mean(axis=0))
    centres = np.array([c.center for c in geometry.cells])
    on_mat = centres @ placement[:2, :2].T + placement[:2, 2]
    points = np.column_stack([on_mat, np.full(len(on_mat), -float(board["top_mm"]))])
    rotation = np.asarray(camera["R"], dtype=np.float64)
    px, _ = cv2.projectPoints(
        points,
        cv2.Rodrigues(rotation)[0],
        np.asarray(camera["t"], dtype=np.float64),
        np.asarray(camera["K"], dtype=np.float64),
        np.asarray(camera.get("dist", np.zeros(5)), dtype=np.float64),
    )
    return px.reshape(-1, 2)


def bench_photos(game: str, photos: Iterable[Photo]) -> tuple[PhotoBench, list[str]]:
    """Measure ``game``'s reader on ``photos`` (all of that game); also one line per photo that
    is not an image (skipped)."""
    cv2.setNumThreads(1)
    geometry = load_geometry(game)
    reader = reader_for(game, geometry)
    centres = np.array([c.center for c in geometry.cells])
    problems: list[str] = []
    failures: list[tuple[Path, str]] = []
    first_ms: list[float] = []
    frame_ms: list[float] = []
    warp_ms: list[float] = []
    locate_px: list[float] = []
    scenes = right = total = boards_right = not_found = hands = false_settled = 0
    markers_found = markers_visible = 0
    clear_right = clear_flagged = hand_flagged = reported = misread = 0
    for photo in photos:
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        if image is None:
            problems.append(f"{photo.path}: not an image (missing, corrupt or another format)")
            continue
        scenes += 1
        hands += photo.occluded
        visible = [n for n in photo.truth if n not in photo.hidden]
        total += len(visible)
        markers_visible += len(photo.markers)
        try:
            timed = timed_read(image, geometry, reader)
        except BoardNotFound as exc:
            not_found += 1
            failures.append((photo.path, f"board not found: {exc.reason}"))
            continue
        obs = timed.observation
        markers_found += len(photo.markers.intersection(timed.first_markers))
        first_ms.append(timed.first_ms)
        frame_ms.append(timed.frame_ms)
        warp_ms.append(timed.warp_ms)
        if photo.drawn is not None:
            seen = timed.pose.surface().to_image(centres)
            locate_px.append(float(np.linalg.norm(seen - photo.drawn, axis=1).max()))
        right += sum(1 for n in visible if obs.cells.get(n, ...) == photo.truth[n])
        shown = [n for n in obs.cells if n in photo.truth]
        reported += len(shown)
        misread += sum(1 for n in shown if obs.cells[n] != photo.truth[n])
        errors = board_errors(geometry, photo.truth, photo.hidden, photo.occluded, obs)
        boards_right += not errors
        held = obs.occluded or obs.partial  # the pipeline waits for a clear view
        if photo.occluded:
            ok = hand_scene_right(photo.truth, photo.hidden, obs)
            hand_flagged += ok
            false_settled += not held and not ok
        else:
            ok = not errors
            clear_right += ok
            clear_flagged += held
        if not ok:
            failures.append((photo.path, errors.describe()))
    clear = scenes - hands
    figures = VisionBench(
        game=game,
        scenes=scenes,
        cell_accuracy=right / total if total else 0.0,
        board_accuracy=boards_right / scenes if scenes else 0.0,
        false_settled=false_settled,
        ms_per_frame=_median(frame_ms),
        first_frame_ms=_median(first_ms),
        warp_ms=_median(warp_ms),
        not_found=not_found,
        hand_scenes=hands,
        locate_px=_median(locate_px),
        locate_px_p90=float(np.percentile(locate_px, 90)) if locate_px else float("nan"),
        markers_found=markers_found,
        markers_visible=markers_visible,
        clear_boards=clear_right / clear if clear else float("nan"),
        clear_flagged=clear_flagged,
        hand_flagged=hand_flagged,
    )
    bench = PhotoBench(
        figures=figures,
        misread_reported=misread / reported if reported else float("nan"),
        failures=tuple(failures),
    )
    return bench, problems


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def scan(folder: Path, game: str | None = None) -> tuple[dict[str, list[Photo]], list[str]]:
    """The labelled photos under ``folder`` by game (``game``: only that one), in the corpus
    bench's game order, and one line per label that cannot be used."""
    photos: dict[str, list[Photo]] = {}
    problems = []
    for label in find_labels(folder):
        try:
            photo = load_label(label)
        except LabelError as exc:
            problems.append(f"{label}: {exc}")
            continue
        if game is None or photo.game == game:
            photos.setdefault(photo.game, []).append(photo)
    order = {g: i for i, g in enumerate((*BENCH_GAMES, *GAMES))}
    return dict(sorted(photos.items(), key=lambda kv: order[kv[0]])), problems


def cmd_bench_photos(args: argparse.Namespace) -> int:
    """``referee bench vision --photos DIR``: print each game's figures (``--json``: one object;
    ``--failures``: the photos not read right, on stderr). Exit 2 when there is no photo."""
    folder = Path(args.photos)
    if not folder.is_dir():
        print(f"referee: {folder} is not a folder", file=sys.stderr)
        return 2
    photos, problems = scan(folder, args.game)
    for line in problems:
        print(f"referee: skipped {line}", file=sys.stderr, flush=True)
    if not photos:
        which = f"{args.game} " if args.game else ""
        print(f"referee: no labelled {which}photos in {folder}", file=sys.stderr)
        return 2
    results = {}
    skipped = len(problems)
    for game, group in photos.items():
        bench, unreadable = bench_photos(game, group)
        skipped += len(unreadable)
        for line in unreadable:
            print(f"referee: skipped {line}", file=sys.stderr, flush=True)
        if args.failures:
            for path, what in bench.failures:
                print(f"{game} {path}: {what}", file=sys.stderr, flush=True)
        results[game] = bench.to_json()
        if not args.json:
            _print(game, bench)
    if args.json:
        print(json.dumps({"games": results, "skipped": skipped}))
    elif skipped:
        print(f"{skipped} file(s) skipped (see above)")
    return 0


def _print(game: str, bench: PhotoBench) -> None:
    """Two lines of one game's figures."""
    r = bench.figures
    clear = r.scenes - r.hand_scenes
    print(
        f"{game:12s} {r.scenes} photos  cells {100 * r.cell_accuracy:7.3f} %  boards "
        f"{100 * r.board_accuracy:6.2f} %  clear boards {100 * r.clear_boards:6.2f} % "
        f"(flagged {r.clear_flagged}/{clear})  hand flagged {r.hand_flagged}/"
        f"{r.hand_scenes}  false settled {r.false_settled}/{r.hand_scenes}",
        flush=True,
    )
    print(
        f"{'':12s} misread reported {100 * bench.misread_reported:6.3f} %  {r.ms_per_frame:6.2f} "
        f"ms/frame  warp {r.warp_ms:5.2f} ms  first frame {r.first_frame_ms:6.2f} ms  not found "
        f"{r.not_found}  cells placed within {r.locate_px:.2f} px (p90 {r.locate_px_p90:.2f})",
        flush=True,
    )
