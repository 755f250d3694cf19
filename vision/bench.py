"""``referee bench vision``: accuracy and speed of localise+read over a seeded rendered corpus.

For every game, ``scenes`` random positions are rendered by :mod:`vision.synth` (about 40 % with a
hand or arm over the board) and read through the real path: a fresh :class:`BoardLocator` (no
tracking to lean on) and the game's reader, on one OpenCV thread.

- ``cell_accuracy``: over every cell not hidden by the hand, the fraction read right (a visible
  cell left out of the observation counts as wrong).
- ``board_accuracy``: the fraction of scenes read entirely right: every reported cell right, every
  visible cell reported, a clear board never flagged ``occluded`` (a hand over the board need
  not be flagged when nothing it hides is reported wrong: the rule of the labelled photos,
  ``vision-samples/README.md``). A cell counts
  as hidden when any of its sample points is under the hand; a visible cell at the hand's edge
  (its centre within 1.5 cell pitches of a hidden cell's) may be left out without failing the
  board, since a reader cannot place the hand's edge to the millimetre and leaving a doubtful
  cell out of an occluded frame is the safe answer (it still counts in ``cell_accuracy``).
- ``clear_boards``, ``clear_flagged``, ``hand_flagged``: the issue's targets by the labelled
  photos' rule (:func:`hand_scene_right`): the fraction of the clear scenes read entirely right,
  the clear scenes reported ``occluded`` or ``partial`` (a referee that would wait forever), and
  the hand scenes flagged (the referee waits) or read right on every cell, of ``hand_scenes``.
- ``clear_by_light`` (rendered splits): the clear scenes by the light's conditions that wash
  pieces towards white (:func:`light_conditions`), each with how many were read entirely right.
- ``pieces_by_set`` (rendered splits): the pieces (cells not empty) of the clear scenes the
  reader did not flag, by the kind of the scene's set (``Variation.piece_set``: feet that fade
  into the board or not; the look's colours, wooden, or wooden with painted balls), each with
  how many were misread.
- ``false_settled``: hand scenes that the full pipeline (settle filter + reader) reported as a
  settled board, although the hand stayed (perfectly still) over it for 1.5 s at 10 fps after
  the clear board had settled.
- ``ms_per_frame``: median milliseconds of localise+read per 1280x960 frame at camera speed: the
  locator has seen the board in the previous frames (as it has in the running appliance) and
  tracks its markers; ``first_frame_ms``: the same for the very first frame, when the markers are
  searched over the whole frame and the lens is estimated; ``warp_ms``: median of one full-frame
  ``cv2.warpPerspective`` of the same frame, the yardstick.
- ``locate_px`` / ``locate_px_p90``: how well the board was found, reader aside: per scene, the
  largest distance (px) between a cell's centre on the board's face where the located pose puts
  it and where the scene drew it; the median and the 90th percentile over the scenes.

- ``markers_found`` / ``markers_visible``: the game's markers that the first frame's search pass
  found, out of those wholly in the frame and not under the hand (a hand over part of a marker
  hides it); ``not_found`` counts the scenes where no board was found at all.

With ``misplaced`` every board lies up to ``vision.synth.scene.MAX_BOARD_SHIFT`` off its outline
on the mat, as a board put down by hand does. ``domain`` draws the scenes from other ranges
(``--zoom 1.5,1.8``: the camera 1.5 to 1.8 times as far as the closest that keeps the mat in view).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from engine import Observation, new_game
from engine.core import Content

from .geometry import BoardGeometry, load_geometry
from .locate import BoardLocator, BoardNotFound, BoardPose
from .model import model_for
from .pipeline import SETTLED, VisionPipeline
from .readers import Reader, reader_for
from .synth import Domain, Scene, random_board_shift, random_position, render_scene, traced

BENCH_GAMES = ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo")
FPS = 10.0
#: frames the locator sees before the timed one (its markers are then tracked, not searched)
TRACKED_FRAMES = 4


@dataclass(frozen=True)
class VisionBench:
    """One game's figures."""

    game: str
    scenes: int
    cell_accuracy: float
    board_accuracy: float
    false_settled: int
    ms_per_frame: float
    first_frame_ms: float
    warp_ms: float
    not_found: int
    hand_scenes: int
    #: per scene, the largest distance (px) between a cell's centre on the board's face as the
    #: pose puts it and as the scene drew it: median and 90th percentile over the scenes
    locate_px: float = float("nan")
    locate_px_p90: float = float("nan")
    #: the game's markers found on the first frame, out of those in the frame and not under a hand
    markers_found: int = 0
    markers_visible: int = 0
    #: the issue's targets, by the labelled photos' rule: clear scenes read entirely right (of
    #: the clear scenes), clear scenes reported occluded or partial, and hand scenes flagged or
    #: read right on every cell (:func:`hand_scene_right`)
    clear_boards: float = float("nan")
    clear_flagged: int = 0
    hand_flagged: int = 0
    #: (scene index, what went wrong) of every scene not read entirely right
    failures: tuple[tuple[int, str], ...] = ()
    #: rendered splits: per light condition (:func:`light_conditions`), the clear scenes read
    #: entirely right and the clear scenes of that condition
    clear_by_light: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: per kind of piece set (``Variation.piece_set``), the pieces misread and the pieces on the
    #: clear scenes read unflagged
    pieces_by_set: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The per-game object of ``referee bench vision --json``."""
        light = {
            name: {"right": right, "scenes": scenes}
            for name, (right, scenes) in sorted(self.clear_by_light.items())
        }
        by_set = {
            name: {"misread": misread, "pieces": pieces}
            for name, (misread, pieces) in sorted(self.pieces_by_set.items())
        }
        return {
            "scenes": self.scenes,
            "cell_accuracy": round(self.cell_accuracy, 6),
            "board_accuracy": round(self.board_accuracy, 6),
            "false_settled": self.false_settled,
            "ms_per_frame": round(self.ms_per_frame, 3),
            "warp_ms": round(self.warp_ms, 3),
            "first_frame_ms": round(self.first_frame_ms, 3),
            "not_found": self.not_found,
            "hand_scenes": self.hand_scenes,
            "locate_px": round(self.locate_px, 3),
            "locate_px_p90": round(self.locate_px_p90, 3),
            "markers_found": self.markers_found,
            "markers_visible": self.markers_visible,
            "clear_boards": round(self.clear_boards, 6),
            "clear_flagged": self.clear_flagged,
            "hand_flagged": self.hand_flagged,
            **({"clear_by_light": light} if light else {}),
            **({"pieces_by_set": by_set} if by_set else {}),
        }


#: The light conditions :func:`light_conditions` tells apart.
LIGHT_CONDITIONS = ("broad_glare", "path_to_white", "plain")


def light_conditions(scene: Scene) -> tuple[str, ...]:
    """The conditions of a rendered scene's light that wash its pieces towards white:
    ``broad_glare`` (a broad reflection, a window or the sky, on glossy pieces:
    ``Domain.broad_glare``), ``path_to_white`` (the camera's rendering desaturates bright
    colours: ``Domain.desaturate_chance``); ``("plain",)`` for neither (every corpus scene)."""
    response = scene.params.get("response") or {}
    found = tuple(
        name
        for name, on in (
            ("broad_glare", bool(scene.params.get("broad_glare", False))),
            ("path_to_white", float(response.get("desaturate", 0.0)) > 0.0),
        )
        if on
    )
    return found or ("plain",)


def hand_edge(geometry: BoardGeometry, hidden: Collection[str]) -> set[str]:
    """The cells whose centre lies within 1.5 cell pitches of a ``hidden`` cell's centre (the
    hidden cells included)."""
    if not hidden:
        return set()
    names = [c.name for c in geometry.cells]
    centres = np.array([c.center for c in geometry.cells])
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(gaps, np.inf)
    pitch = float(np.median(gaps.min(axis=1)))
    under = np.isin(names, list(hidden))
    near = (gaps[:, under] <= 1.5 * pitch).any(axis=1) | under
    return {n for n, k in zip(names, near, strict=True) if k}


@dataclass(frozen=True)
class BoardErrors:
    """What one reading got wrong: visible cells ``misread``, cells under the hand reported
    wrong (``hidden_wrong``), visible cells ``left_out`` away from the hand's edge, and whether
    the ``occluded`` flag is wrong (``missed_hand``: a hand not flagged; ``false_hand``: a clear
    board flagged). A hand not flagged is no error by itself: a scene with a hand is right when
    it is flagged or every cell is read right (``vision-samples/README.md``), and a hand that
    hides nothing misread leaves the referee's verdict right."""

    misread: tuple[str, ...] = ()
    hidden_wrong: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    missed_hand: bool = False
    false_hand: bool = False

    def __bool__(self) -> bool:
        return bool(self.misread or self.hidden_wrong or self.left_out or self.false_hand)

    def describe(self) -> str:
        """One line for ``referee bench vision --failures``."""
        parts = [
            f"{label} {' '.join(names)}"
            for label, names in (
                ("misread", self.misread),
                ("hidden cell wrong", self.hidden_wrong),
                ("left out", self.left_out),
            )
            if names
        ]
        parts += ["hand not flagged"] * self.missed_hand + ["clear board flagged"] * self.false_hand
        return "; ".join(parts)


def board_errors(
    geometry: BoardGeometry,
    truth: Mapping[str, Content],
    hidden: Collection[str],
    occluded: bool,
    obs: Observation,
) -> BoardErrors:
    """What ``obs`` got wrong in a scene of true contents ``truth``, ``hidden`` cells under a
    hand and ``occluded`` set when a hand is over the board."""
    wrong = sorted(n for n in truth if n in obs.cells and obs.cells[n] != truth[n])
    left_out = set(truth) - obs.cells.keys() - hand_edge(geometry, hidden)
    return BoardErrors(
        misread=tuple(n for n in wrong if n not in hidden),
        hidden_wrong=tuple(n for n in wrong if n in hidden),
        left_out=tuple(sorted(left_out)),
        missed_hand=occluded and not obs.occluded,
        false_hand=obs.occluded and not occluded,
    )


def hand_scene_right(
    truth: Mapping[str, Content], hidden: Collection[str], obs: Observation
) -> bool:
    """Whether a scene with a hand over the board is read right by the labelled photos' rule
    (``vision-samples/README.md``): flagged ``occluded``, or ``partial`` with every ``hidden``
    cell left out (the referee waits for a clear view either way), or right on every cell."""
    flagged = obs.occluded or (obs.partial and not set(hidden) & obs.cells.keys())
    return flagged or all(obs.cells.get(n, ...) == v for n, v in truth.items())


def board_right(
    geometry: BoardGeometry,
    truth: Mapping[str, Content],
    hidden: Collection[str],
    occluded: bool,
    obs: Observation,
) -> bool:
    """Whether ``obs`` reads a scene (true contents ``truth``, ``hidden`` cells under a hand,
    ``occluded``) entirely right: no reported cell wrong, ``occluded`` right, and every visible
    cell reported but those at the hand's edge (:func:`hand_edge`)."""
    return not board_errors(geometry, truth, hidden, occluded, obs)


@dataclass(frozen=True)
class TimedRead:
    """One image read as the benchmark reads it, and how long each part took (ms)."""

    observation: Observation
    pose: BoardPose
    first_ms: float
    frame_ms: float
    warp_ms: float
    #: the markers the first (untracked) frame found
    first_markers: tuple[int, ...] = ()


def timed_read(image: np.ndarray, geometry: BoardGeometry, reader: Reader) -> TimedRead:
    """Read ``image`` through the real path: a fresh locator (its first frame timed with the
    read: ``first_ms``), then the same image as the camera keeps filming it, the markers tracked;
    the last of those frames is the one read and timed (``frame_ms``), and ``warp_ms`` times
    one full-frame ``cv2.warpPerspective`` of it. Raises :class:`BoardNotFound`."""
    locator = BoardLocator([geometry])
    start = time.perf_counter()
    first = locator.locate(image, 0.0)
    reader.read(image, first)
    first_ms = (time.perf_counter() - start) * 1000.0
    for k in range(1, TRACKED_FRAMES):  # the camera keeps looking at the same board
        locator.locate(image, k / FPS)
    start = time.perf_counter()
    pose = locator.locate(image, TRACKED_FRAMES / FPS)
    obs = reader.read(image, pose)
    frame_ms = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    cv2.warpPerspective(image, pose.homography, (image.shape[1], image.shape[0]))
    warp_ms = (time.perf_counter() - start) * 1000.0
    return TimedRead(obs, pose, first_ms, frame_ms, warp_ms, first.markers_seen)


def _settles_under_hand(game: str, clear: np.ndarray, covered: np.ndarray) -> bool:
    """True if the pipeline reports ``settled`` while the hand is over the board."""
    pipeline = VisionPipeline(game)
    t = 0.0
    for _ in range(int(1.0 * FPS)):  # the clear board settles first
        pipeline.process(clear, t)
        t += 1 / FPS
    for _ in range(int(1.5 * FPS)):
        if pipeline.process(covered, t).status == SETTLED:
            return True
        t += 1 / FPS
    return False


#: The scene sets of the bench: the fixed corpus (the nominal look, as it always was), the
#: shared training domain (a game's ``train`` split draws its model's own, which its recipe may
#: widen: :func:`split_domain`) and the held-out domain (other seeds and ranges, never used for
#: fitting), each from a stream of seeds of its own.
SPLITS: dict[str, Domain] = {
    "corpus": Domain.NOMINAL,
    "train": Domain.TRAIN,
    "heldout": Domain.HELDOUT,
}
#: Splits drawn by the path tracer (:mod:`vision.synth.traced`):
#: ``traced`` is the held-out domain's draws in light this package's painter does not make.
TRACED_SPLITS: dict[str, Domain] = {"traced": Domain.HELDOUT}
#: Every split of ``referee bench vision``, painted and traced.
VISION_SPLITS: dict[str, Domain] = {**SPLITS, **TRACED_SPLITS}
#: Samples a pixel of the traced splits.
TRACED_SPP = 8


def _stream(split: str, seed: int) -> tuple[np.random.Generator, int]:
    """The generator of a split's positions and the first seed of its renders (the corpus's
    as it always was; the other splits' seeds differ from the corpus's and the training's)."""
    if split == "corpus":
        return np.random.default_rng(seed), seed * 1000
    stream = list(VISION_SPLITS).index(split)
    return np.random.default_rng([seed, stream]), (seed * 1000) * 10 + stream


def corpus_scene(
    game: str,
    index: int,
    seed: int = 2026,
    hand: bool | None = None,
    misplaced: bool = False,
    split: str = "corpus",
    zoom: tuple[float, float] | None = None,
    domain: Domain | None = None,
) -> Scene:
    """Scene ``index`` of the bench's ``split`` for ``seed`` (to look at a failure again);
    ``domain``: drawn from that domain instead of the split's (its position, camera and seed)."""
    rng, first = _stream(split, seed)
    for _ in range(index):
        random_position(game, rng)
    cells = random_position(game, rng)
    domain = _domain(split, game, zoom, domain)
    return _render(game, cells, _seed(split, first, index), misplaced, hand, domain, split)


def _seed(split: str, first: int, index: int) -> int:
    return first + (index if split == "corpus" else 10 * index)


def split_domain(split: str, game: str) -> Domain:
    """The domain ``game``'s scenes of ``split`` are drawn from: the ``train`` split's is the
    one the game's model was fitted on, the shared training domain as its recipe widened it
    (the model file's ``trained.domain_widened``)."""
    if split != "train":
        return VISION_SPLITS[split]
    trained = model_for(game).meta.get("trained", {})
    return Domain.TRAIN.widened(trained.get("domain_widened", {}))


def _domain(
    split: str, game: str, zoom: tuple[float, float] | None, domain: Domain | None = None
) -> Domain:
    """The domain of ``game``'s ``split`` (or ``domain`` in its place), its camera ``zoom``
    range replaced when given."""
    domain = split_domain(split, game) if domain is None else domain
    return domain if zoom is None else replace(domain, zoom=zoom)


def _render(
    game: str,
    cells: dict,
    seed: int,
    misplaced: bool,
    hand: bool | None = None,
    domain: Domain = Domain.NOMINAL,
    split: str = "corpus",
) -> Scene:
    """One bench scene; ``misplaced``: the board lies off its outline on the mat (not in a
    traced split)."""
    if split in TRACED_SPLITS:
        if misplaced:
            raise ValueError(f"the {split} split has no boards laid off their outlines")
        return traced.render_traced(game, cells, seed, domain=domain, spp=TRACED_SPP, hand=hand)
    shift = random_board_shift(seed, game) if misplaced else None
    return render_scene(game, cells, seed, hand=hand, board_shift=shift, domain=domain)


def visible_markers(scene: Scene) -> frozenset[int]:
    """The markers of ``scene`` wholly inside the frame and not under the hand."""
    return frozenset(scene.marker_quads()) - scene.hidden_markers


def bench_game(
    game: str,
    scenes: int = 200,
    seed: int = 2026,
    misplaced: bool = False,
    split: str = "corpus",
    zoom: tuple[float, float] | None = None,
) -> VisionBench:
    """Measure one game over ``scenes`` rendered scenes of ``split`` (:data:`SPLITS`;
    ``misplaced``: every board lies a few mm and degrees off its outline on the mat, up to
    ``vision.synth.scene.MAX_BOARD_SHIFT``; ``zoom``: the camera's distance range instead of the
    split's, e.g. further away)."""
    cv2.setNumThreads(1)
    geometry = load_geometry(game)
    codec = new_game(game)
    reader = reader_for(game, geometry)
    rng, first = _stream(split, seed)
    domain = _domain(split, game, zoom)
    right = total = boards_right = false_settled = not_found = hands = 0
    markers_found = markers_visible = 0
    clear_scenes = clear_right = clear_flagged = hand_flagged = 0
    light_seen = dict.fromkeys(LIGHT_CONDITIONS, 0)
    light_right = dict.fromkeys(LIGHT_CONDITIONS, 0)
    set_pieces: Counter[str] = Counter()
    set_misread: Counter[str] = Counter()
    frame_ms: list[float] = []
    first_ms: list[float] = []
    warp_ms: list[float] = []
    failures: list[tuple[int, str]] = []
    locate_px: list[float] = []
    names = [c.name for c in geometry.cells]
    centres = np.array([c.center for c in geometry.cells])
    for i in range(scenes):
        cells = random_position(game, rng)
        scene = _render(game, cells, _seed(split, first, i), misplaced, domain=domain, split=split)
        truth = {n: codec.cell_from_json(v) for n, v in scene.cells.items()}
        visible = [n for n in truth if n not in scene.hidden]
        in_view = visible_markers(scene)
        markers_visible += len(in_view)
        clear_scenes += not scene.occluded
        light = () if scene.occluded else light_conditions(scene)
        for name in light:
            light_seen[name] += 1
        try:
            timed = timed_read(scene.image, geometry, reader)
        except BoardNotFound as exc:
            not_found += 1
            total += len(visible)
            failures.append((i, f"board not found: {exc.reason}"))
            continue
        obs, pose = timed.observation, timed.pose
        markers_found += len(in_view.intersection(timed.first_markers))
        first_ms.append(timed.first_ms)
        frame_ms.append(timed.frame_ms)
        warp_ms.append(timed.warp_ms)
        drawn = scene.cell_centers()
        seen = pose.surface().to_image(centres)
        locate_px.append(float(np.linalg.norm(seen - [drawn[n] for n in names], axis=1).max()))
        good = [n for n in visible if n in obs.cells and obs.cells[n] == truth[n]]
        right += len(good)
        total += len(visible)
        errors = board_errors(geometry, truth, scene.hidden, scene.occluded, obs)
        boards_right += not errors
        if errors:
            failures.append((i, errors.describe()))
        if not scene.occluded:
            clear_right += not errors
            flagged = obs.occluded or obs.partial
            clear_flagged += flagged
            for name in light:
                light_right[name] += not errors
            if not flagged:
                pieces = [n for n, v in truth.items() if v is not None]
                kind = scene.params["piece_set"]
                set_pieces[kind] += len(pieces)
                set_misread[kind] += sum(obs.cells.get(n) != truth[n] for n in pieces)
        if scene.occluded:
            hands += 1
            hand_flagged += hand_scene_right(truth, scene.hidden, obs)
            clear = _render(
                game, cells, _seed(split, first, i), misplaced, False, domain, split
            ).image
            false_settled += _settles_under_hand(game, clear, scene.image)
    return VisionBench(
        game=game,
        scenes=scenes,
        cell_accuracy=right / total if total else 0.0,
        board_accuracy=boards_right / scenes,
        false_settled=false_settled,
        ms_per_frame=statistics.median(frame_ms) if frame_ms else float("nan"),
        first_frame_ms=statistics.median(first_ms) if first_ms else float("nan"),
        warp_ms=statistics.median(warp_ms) if warp_ms else float("nan"),
        not_found=not_found,
        hand_scenes=hands,
        failures=tuple(failures),
        locate_px=statistics.median(locate_px) if locate_px else float("nan"),
        locate_px_p90=float(np.percentile(locate_px, 90)) if locate_px else float("nan"),
        markers_found=markers_found,
        markers_visible=markers_visible,
        clear_boards=clear_right / clear_scenes if clear_scenes else float("nan"),
        clear_flagged=clear_flagged,
        hand_flagged=hand_flagged,
        clear_by_light={n: (light_right[n], light_seen[n]) for n in LIGHT_CONDITIONS},
        pieces_by_set={k: (set_misread[k], n) for k, n in set_pieces.items()},
    )


def parse_splits(text: str, misplaced: bool) -> list[str] | None:
    """The comma-separated splits of ``--splits``; None (after a one-line error) when one is
    unknown, none is given, or a traced split cannot be benched (:func:`_traced_problem`)."""
    known = tuple(VISION_SPLITS)
    splits = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in splits if s not in known]
    if unknown or not splits:
        print(
            f"referee: unknown split {', '.join(unknown) or '(none)'}; "
            f"choose from {', '.join(known)}",
            file=sys.stderr,
        )
        return None
    problem = _traced_problem(splits, misplaced)
    if problem:
        print(f"referee: {problem}", file=sys.stderr)
        return None
    return splits


def bench_splits(
    args: argparse.Namespace,
    run: Callable[[str, str], Any],
    line: Callable[[Any], str],
    misplaced: bool = False,
) -> int:
    """Every game of every split of ``args.splits`` (``args.game``: only it) through ``run(game,
    split)``, whose result (with a ``to_json()``) is printed per game as ``line(result)`` after
    the split and the game, or, with ``args.json``, as one object ``{"games": {GAME: {...}},
    SPLIT: {...}, ...}`` (``games``: the corpus); 2 after a one-line error when a split cannot
    be benched (``misplaced``: boards laid off their outlines)."""
    splits = parse_splits(args.splits, misplaced)
    if splits is None:
        return 2
    out: dict[str, dict] = {}
    for split in splits:
        results = out.setdefault("games" if split == "corpus" else split, {})
        for name in [args.game] if args.game else BENCH_GAMES:
            result = run(name, split)
            results[name] = result.to_json()
            if not args.json:
                print(f"{split:8s} {name:12s} {line(result)}", flush=True)
    if args.json:
        print(json.dumps(out))
    return 0


def _traced_problem(splits: list[str], misplaced: bool) -> str:
    """Why the traced splits among ``splits`` cannot be benched ("" when they can)."""
    asked = [s for s in splits if s in TRACED_SPLITS]
    if not asked:
        return ""
    if misplaced:
        return f"the {asked[0]} split has no boards laid off their outlines (drop --misplaced)"
    try:
        traced.mitsuba()
    except traced.TracerMissing as exc:
        return str(exc)
    return ""


def cmd_bench_vision(args: argparse.Namespace) -> int:
    """``referee bench vision``: every game on every split asked for; ``--json`` prints
    ``{"games": {GAME: {...}}, "heldout": {GAME: {...}}, ...}`` (``games``: the corpus)."""

    def run(name: str, split: str) -> VisionBench:
        r = bench_game(name, args.scenes, args.seed, args.misplaced, split, args.zoom)
        if args.failures:
            for index, what in r.failures:
                print(f"{split} {name} scene {index}: {what}", file=sys.stderr, flush=True)
        return r

    return bench_splits(args, run, _line, args.misplaced)


def _line(r: VisionBench) -> str:
    """One game's figures, in a line."""
    return (
        f"cells {100 * r.cell_accuracy:7.3f} %  boards "
        f"{100 * r.board_accuracy:6.2f} % (clear {100 * r.clear_boards:6.2f} %, "
        f"{r.clear_flagged} flagged; hand scenes flagged or right "
        f"{r.hand_flagged}/{r.hand_scenes})  false settled {r.false_settled}/"
        f"{r.hand_scenes}  {r.ms_per_frame:6.2f} ms/frame  warp {r.warp_ms:5.2f} ms "
        f"({r.ms_per_frame / r.warp_ms:.1f}x)  first frame {r.first_frame_ms:6.2f} ms  "
        f"not found {r.not_found}  markers {r.markers_found}/{r.markers_visible}  "
        f"cells placed within {r.locate_px:.2f} px (p90 {r.locate_px_p90:.2f})"
    )
