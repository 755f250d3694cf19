"""Find a mat by its markers' outlines when no marker's bits can be decoded alone.

Far, blurred or over-exposed markers still show their square outlines: ArUco's detector finds
them and rejects them, because each marker's bits are past the dictionary's correction. They are
mostly right all the same, so the mat is found from all its markers together:

1. every candidate quad, taken as each of the layout's markers at each of its four turns, gives
   a homography from the mat (mm) to the image. One small quad says little of the far side of
   the mat, so the hypothesis grows from it, nearest marker first: each next marker is taken
   from the candidate within :data:`GATE` of a side of where the markers taken so far put it,
   and the homography fitted again on all of them. Its markers are then those whose corners
   lie within :data:`TOLERANCE` of a side of a candidate's;
2. of the hypotheses that the most markers confirm, the mat's placement is the one whose
   markers' bits, sampled through its homography fitted on all of them, differ least from the
   ids and turns it gives them; a marker counts only when its own bits are nearer its id than
   chance (at most :data:`SEED_BIT_ERRORS` wrong), and at least :data:`MIN_MARKERS` must;
3. it is kept only when its markers' bits are on average fewer than :data:`MAX_BIT_ERRORS`
   wrong (a wrong id or turn gets about half of them wrong), and no other placement is as near.

Once the mat is found, :func:`follow` keeps each such marker from frame to frame: the outline
nearest where the pose puts it, when its own bits are near enough the marker's.

Measured on the rendered scenes no detector pass could read: the markers' bits were 0.4-2.5 a
marker off their ids at the true pose, and about 6 off the nearest wrong id or turn
(``docs/benchmarks.md``, "the boards not found are there to be registered").
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: a layout marker confirms a hypothesis when a candidate's corners lie, on average, within this
#: share of the marker's projected side of where the hypothesis puts them
TOLERANCE = 0.25
#: how far (in sides) a growing hypothesis's next marker may lie from where it puts it (the
#: layout's markers lie several sides apart: no other marker is that near)
GATE = 1.5
#: markers that must confirm a placement (one quad fits a homography exactly; two more check it)
MIN_MARKERS = 3
#: a placement's markers may have at most this many of their data bits wrong, on average
#: (halfway between none and chance, which is half of a 4x4 marker's 16)
MAX_BIT_ERRORS = 4.0
#: a candidate seeds a hypothesis only as a marker and turn whose bits it shows with at most this
#: many wrong, read through its own corners (nearer the id than chance)
SEED_BIT_ERRORS = 6
#: more distinct candidate quads than this is a patterned surface, not a mat seen badly: the
#: hypotheses would take seconds (a bound on the cost, not on what is found)
MAX_CANDIDATES = 40
#: pixels a module when a marker's bits are sampled, and the middle share of a module read
MODULE_PX = 10
MIDDLE = 0.4


@dataclass(frozen=True)
class Registration:
    """A placement of the mat: its homography (mat mm -> image px), the candidate quads it
    explains as markers (id -> 4x2 corners in the layout's order) and their bit errors."""

    homography: np.ndarray
    markers: dict[int, np.ndarray]
    bit_errors: float


def register(
    grey: np.ndarray,
    quads: np.ndarray,
    layout: dict[int, np.ndarray],
    dictionary: cv2.aruco.Dictionary,
) -> Registration | None:
    """The mat of marker ``layout`` (id -> 4x2 corners, mm, in ArUco order) among the candidate
    ``quads`` (N x 4 x 2 image px) of ``grey``, or None when no placement holds (above)."""
    if len(quads) > 2 * MAX_CANDIDATES:  # each outline is found at most twice (two images)
        return None
    quads = distinct(quads)
    if not MIN_MARKERS <= len(quads) <= MAX_CANDIDATES or len(layout) < MIN_MARKERS:
        return None
    ids = sorted(layout)
    corners = np.stack([layout[i] for i in ids]).astype(np.float64)  # M x 4 x 2
    turns = _turns(quads)
    best: dict[frozenset, Registration] = {}
    most = MIN_MARKERS
    centres = corners.mean(axis=1)
    ideal = [_ideal_bits(i, dictionary) for i in ids]
    for q in range(len(quads)):
        seen = [_bits(grey, turns[q, k], dictionary) for k in range(4)]
        for m in range(len(ids)):
            order = np.argsort(np.linalg.norm(centres - centres[m], axis=1))
            for k in range(4):
                if np.sum(seen[k] != ideal[m]) > SEED_BIT_ERRORS:
                    continue  # this quad does not look like that marker at that turn
                h = _grown(m, (q, k), order, corners, turns)
                matched = _matches(h, corners, turns)
                if len(matched) < most:
                    continue
                if len(matched) > most:
                    most, best = len(matched), {}
                key = frozenset((q2, ids[m2]) for m2, (q2, _) in matched.items())
                if key not in best:
                    best[key] = _placement(grey, h, matched, ids, corners, turns, ideal, dictionary)
    ranked = sorted(best.values(), key=lambda r: r.bit_errors)
    if not ranked or ranked[0].bit_errors > MAX_BIT_ERRORS:
        return None
    winner = ranked[0]
    rivals = [r for r in ranked[1:] if not _same(r, winner, corners)]
    if rivals and rivals[0].bit_errors <= MAX_BIT_ERRORS:
        return None  # two placements read alike: neither is sure
    return winner


def follow(
    image: np.ndarray,
    expected: np.ndarray,
    quads: np.ndarray,
    marker: int,
    dictionary: cv2.aruco.Dictionary,
    gate: float = TOLERANCE,
) -> np.ndarray | None:
    """Marker ``marker`` found by its outline where a pose puts it: of the candidate ``quads``
    (N x 4 x 2 px of ``image``), the one nearest ``expected`` (its 4x2 corners where the pose
    puts them, in ArUco order; the turn follows from the pose), within ``gate`` of a side
    (:data:`TOLERANCE` for a tracked pose, :data:`GATE` for a first fit through a few markers),
    when the bits it shows through its own corners have at most :data:`MAX_BIT_ERRORS` wrong
    (alone, with no other marker to vouch for it, a candidate must be nearer its id than a
    registration's seed). The marker is then ``expected`` moved to the outline's centre: blur
    and bright paper move an outline's corners (3-4 px on a far, over-exposed mat), not its
    middle. None when no outline is followed."""
    quads = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(quads):
        return None
    turns = _turns(quads)
    near = _nearest(np.eye(3), expected[None], turns, gate)  # the pose has put it already
    if not near:
        return None
    quad = turns[near[0]]
    if np.sum(_bits(image, quad, dictionary) != _ideal_bits(marker, dictionary)) > MAX_BIT_ERRORS:
        return None
    return expected + (quad.mean(axis=0) - expected.mean(axis=0))


def distinct(quads: np.ndarray) -> np.ndarray:
    """``quads`` less those whose corners all lie within a pixel of an earlier one's, in any
    turn (the same outline found in two images)."""
    quads = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    gaps = [np.abs(quads[:, None] - np.roll(quads, k, axis=1)[None]) for k in range(4)]
    near = np.min([g.max(axis=(2, 3)) for g in gaps], axis=0) <= 1.0
    earlier = np.tril(near, -1).any(axis=1)  # a twin before it in the list
    return quads[~earlier]


def _turns(quads: np.ndarray) -> np.ndarray:
    """Each of N candidate quads at each of its four turns (N x 4 x 4 x 2): its corners listed
    from each corner in turn."""
    return np.stack([np.roll(quads, -k, axis=1) for k in range(4)], axis=1)


def _same(a: Registration, b: Registration, corners: np.ndarray) -> bool:
    """Whether two registrations put the layout's markers in the same places (one found twice,
    through two candidate quads of one marker)."""
    pa, pb = (
        cv2.perspectiveTransform(corners.reshape(-1, 1, 2), r.homography).reshape(-1, 4, 2)
        for r in (a, b)
    )
    side = np.linalg.norm(pa - np.roll(pa, 1, axis=1), axis=2).mean(axis=1)
    return bool(np.all(np.linalg.norm(pa - pb, axis=2).mean(axis=1) < TOLERANCE * side))


def _grown(
    seed: int, at: tuple[int, int], order: np.ndarray, corners: np.ndarray, turns: np.ndarray
) -> np.ndarray:
    """The homography of layout marker ``seed`` on candidate ``at`` (candidate, turn), grown
    over the layout's markers in ``order`` (nearest the seed first)."""
    matched = {seed: at}
    h = cv2.getPerspectiveTransform(corners[seed].astype(np.float32), turns[at].astype(np.float32))
    for m in order:
        if m in matched:
            continue
        near = _nearest(h, corners[m : m + 1], turns, GATE)
        if not near:
            continue
        matched[int(m)] = near[0]
        src = np.concatenate([corners[i] for i in matched])
        dst = np.concatenate([turns[c] for c in matched.values()])
        h, _ = cv2.findHomography(src, dst, 0)
        if h is None:
            return np.eye(3)
    return h


def _matches(
    homography: np.ndarray, corners: np.ndarray, turns: np.ndarray
) -> dict[int, tuple[int, int]]:
    """Layout marker index -> (candidate, turn) of the candidate quad each marker falls on."""
    return _nearest(homography, corners, turns, TOLERANCE)


def _nearest(
    homography: np.ndarray, corners: np.ndarray, turns: np.ndarray, gate: float
) -> dict[int, tuple[int, int]]:
    """Marker index (in ``corners``) -> (candidate, turn) of the nearest candidate quad to where
    ``homography`` puts it, for the markers within ``gate`` of their side of one."""
    projected = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), homography).reshape(-1, 4, 2)
    side = np.linalg.norm(projected - np.roll(projected, 1, axis=1), axis=2).mean(axis=1)
    # M x N x 4: mean corner distance of each marker to each candidate at each turn
    gap = np.linalg.norm(projected[:, None, None] - turns[None], axis=4).mean(axis=3)
    flat = gap.reshape(len(corners), -1).argmin(axis=1)
    out = {}
    for m, i in enumerate(flat):
        q, k = divmod(int(i), 4)
        if gap[m, q, k] < gate * side[m]:
            out[m] = (q, k)
    return out


def _placement(
    grey: np.ndarray,
    homography: np.ndarray,
    matched: dict[int, tuple[int, int]],
    ids: list[int],
    corners: np.ndarray,
    turns: np.ndarray,
    ideal: list[np.ndarray],
    dictionary: cv2.aruco.Dictionary,
) -> Registration:
    """The hypothesis ``matched``, refitted on all its markers' corners, with its bit errors
    against the layout's ``ideal`` bits (read through the refitted homography, which evens out
    each candidate's corner errors). Only the markers whose own bits are nearer their ids than
    chance (at most :data:`SEED_BIT_ERRORS` wrong) are its markers: an outline of anything else
    (a blob over a marker) confirms nothing. With fewer than :data:`MIN_MARKERS` left it holds
    nothing."""
    src = np.concatenate([corners[m] for m in matched])
    dst = np.concatenate([turns[q, k] for q, k in matched.values()])
    refit, _ = cv2.findHomography(src, dst, 0)
    refit = homography if refit is None else refit
    placed = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), refit).reshape(-1, 4, 2)
    errors = {m: int(np.sum(_bits(grey, placed[m], dictionary) != ideal[m])) for m in matched}
    kept = [m for m, e in errors.items() if e <= SEED_BIT_ERRORS]
    markers = {ids[m]: turns[matched[m]].astype(np.float32) for m in kept}
    if len(kept) < MIN_MARKERS:
        return Registration(refit, markers, float("inf"))
    if len(kept) < len(matched):
        refit, _ = cv2.findHomography(
            np.concatenate([corners[m] for m in kept]),
            np.concatenate([turns[matched[m]] for m in kept]),
            0,
        )
    return Registration(refit, markers, float(np.mean([errors[m] for m in kept])))


def _bits(grey: np.ndarray, quad: np.ndarray, dictionary: cv2.aruco.Dictionary) -> np.ndarray:
    """The data bits ``grey`` shows inside ``quad``: the modules' middles sampled, cut halfway
    between the darkest and the lightest."""
    n = dictionary.markerSize + 2  # data bits and a one-module black border
    size = n * MODULE_PX
    square = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    warp = cv2.getPerspectiveTransform(quad.astype(np.float32), square)
    image = cv2.warpPerspective(grey, warp, (size, size), flags=cv2.INTER_LINEAR)
    lo = round(MODULE_PX * (1 - MIDDLE) / 2)
    hi = MODULE_PX - lo
    modules = image.reshape(n, MODULE_PX, n, MODULE_PX)[:, lo:hi, :, lo:hi].mean(axis=(1, 3))
    return (modules > (modules.min() + modules.max()) / 2)[1:-1, 1:-1]


def _ideal_bits(marker: int, dictionary: cv2.aruco.Dictionary) -> np.ndarray:
    """Marker ``marker``'s data bits, as :func:`_bits` reads an upright, perfect print."""
    n = dictionary.markerSize + 2
    return (dictionary.generateImageMarker(marker, n) > 127)[1:-1, 1:-1]
