"""The vision pipeline: camera frame -> board pose -> settle -> cell reading -> Observation.

``VisionPipeline.process(frame, t)`` is called for every camera frame and says what the board is
doing (not found, moving, occluded, settled with a new observation, unchanged). Only a settled,
unoccluded board is read, so a move is judged once, after the hand has left. ``read_image`` reads a
single photo (``referee read``): there is nothing to wait for, so a hand over the board is reported
as ``occluded`` with the hidden cells left out.

A still board that the reader finds something over is reported ``occluded`` with the reason
:data:`STILL_OCCLUDED`, and read again each time it settles anew. A hand held still leaves, but
a clear board whose look the model takes for a hand (a lamp's colour, a shadow, a blurred
camera) would be waited on for ever: after :meth:`VisionPipeline.read_next_as_clear` (the
players say that nothing is over it) the next settled frame is read as clear.

A marker seen steadily and now missing is a hand over the mat, unless a piece standing on the
board could hide it from this camera (a tall Gobblet piece near the edge, :mod:`vision.hiding`):
then the still board is read, and the read must show a piece in front of every such marker.
A marker missing from a picture that stays still for the settle time (a hand held still over
it, or a small, noisy marker the detector no longer reads) is :data:`STILL_OCCLUDED` too; once
the players say the board is clear, missing markers no longer hold it back and the next still
frame is read as clear.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import Observation
from engine.core import Content

from .geometry import BoardGeometry, load_geometry
from .hiding import markers_coverable, markers_covered
from .locate import (
    NO_MARKERS,
    TOO_FAR_HINT,
    TOO_FEW_MARKERS,
    BoardLocator,
    BoardNotFound,
    BoardPose,
    Rectification,
)
from .readers import Reader, reader_for
from .settle import MARKERS_HIDDEN, MOVING, OCCLUDED, SETTLED, Hints, Settler
from .view_cache import LastView

NO_BOARD = "no-board"
#: The reason of an ``occluded`` result whose board was still: the reader found something over
#: it, or a marker is missing that no piece read stands in front of.
STILL_OCCLUDED = "something over the board"

#: Resolution of the small top-down image the settle filter compares from frame to frame.
SETTLE_PX_PER_MM = 0.5


@dataclass(frozen=True, eq=False)
class FrameResult:
    """What one frame showed: ``status`` is ``no-board``, ``moving``, ``occluded``, ``settled``
    (``observation`` is new and should be judged) or ``unchanged``; ``reason`` says why;
    ``reads_unsure``: the accepted boards have contradicted the reads of the board found at
    this table beyond chance (:attr:`vision.readers.Reader.reads_contradicted`)."""

    status: str
    t: float
    reason: str = ""
    pose: BoardPose | None = None
    observation: Observation | None = None
    reads_unsure: bool = False

    @property
    def game(self) -> str | None:
        """The game whose markers were seen."""
        return self.pose.game if self.pose is not None else None


class VisionPipeline:
    """Locate, settle and read, frame after frame, for one game or for whichever is on the table."""

    def __init__(self, game: str | None = None, *, settle_time: float = 0.4) -> None:
        geometries = [load_geometry(game)] if game else None
        self.locator = BoardLocator(geometries)
        self.settler = Settler(settle_time)
        self._readers: dict[str, Reader] = {}
        self._previous: BoardPose | None = None
        self._clear_next = False
        self._afresh_next = False
        self._coverable_view: LastView[frozenset[int]] = LastView()

    def reader(self, geometry: BoardGeometry) -> Reader:
        """The (calibrating, so kept) reader of ``geometry``'s game."""
        reader = self._readers.get(geometry.game)
        if reader is None:
            reader = self._readers[geometry.game] = reader_for(geometry.game, geometry)
        return reader

    def reset(self) -> None:
        """Forget the tracked board and the settled image (a new game is being set up)."""
        self.locator.reset()
        self.settler.reset()
        self._previous = None
        self._clear_next = False
        self._afresh_next = False
        for reader in self._readers.values():
            reader.forget()

    def read_next_as_clear(self) -> None:
        """The players say that nothing is over the board: read the next settled frame as clear
        (every cell reported, never ``occluded``), once."""
        self._clear_next = True

    def look_again(self) -> None:
        """The players say that a move was missed: read the next still frame even if it looks
        unchanged, every cell afresh (none kept as it was accepted), once."""
        self.settler.reset()
        self._afresh_next = True

    def process(self, frame: np.ndarray, t: float) -> FrameResult:
        """Judge one camera frame captured at ``t`` seconds."""
        try:
            pose = self.locator.locate(frame, t)
        except BoardNotFound as exc:
            self.settler.push(t, None)
            self._previous = None
            last = self.locator.pose
            lost = exc.reason in (NO_MARKERS, TOO_FEW_MARKERS) and last is not None
            return FrameResult(NO_BOARD, t, TOO_FAR_HINT if lost and last.too_far else exc.hint)
        missing = set(pose.markers_missing)
        behind = self._coverable(pose) & missing if missing else frozenset()
        excused = missing if self._clear_next else behind  # the players said it is clear
        hints = Hints.from_pose(pose, self._previous, excused=excused)
        self._previous = pose
        small = Rectification.of_mat(pose.geometry, SETTLE_PX_PER_MM).warp(frame, pose)
        state = self.settler.push(t, small, hints)
        unsure = self.reader(pose.geometry).reads_contradicted
        if state.kind != SETTLED:
            reason = state.reason
            if reason == MARKERS_HIDDEN and self.settler.still_enough(state.still_for):
                reason = STILL_OCCLUDED
            return FrameResult(state.kind, t, reason, pose, reads_unsure=unsure)
        clear, self._clear_next = self._clear_next, False
        try:
            obs = self.reader(pose.geometry).read(
                frame, pose, clear=clear, afresh=self._afresh_next
            )
        except BoardNotFound as exc:
            self.settler.reset()
            return FrameResult(NO_BOARD, t, exc.hint)
        # The settle filter saw a still board, the reader sees something over it (a hand held
        # very still, an object left on the board), or a marker that a piece could stand in
        # front of is missing but no piece read does: wait for a clear view.
        if (
            obs.occluded
            or obs.partial
            or (behind and not clear and not self._explained(behind, obs, pose))
        ):
            self.settler.reset()
            return FrameResult(OCCLUDED, t, STILL_OCCLUDED, pose, reads_unsure=unsure)
        self._afresh_next = False  # read afresh once, by a read that counts
        observation = Observation(**{**obs.__dict__, "t": t})
        return FrameResult(SETTLED, t, "", pose, observation, reads_unsure=unsure)

    def _coverable(self, pose: BoardPose) -> frozenset[int]:
        """The markers a piece standing on some cell would hide from this camera (worked out
        once per view: a still board keeps its pose)."""
        return self._coverable_view.get(pose.view_key(), lambda: markers_coverable(pose))

    def _explained(self, missing: frozenset[int], obs: Observation, pose: BoardPose) -> bool:
        """True if the pieces read in ``obs`` stand in front of every ``missing`` marker."""
        reader = self.reader(pose.geometry)
        pieces = []
        for name, content in obs.cells.items():
            piece = reader.standing(content)
            if piece is not None:
                pieces.append((name, piece))
        return missing <= markers_covered(pose, pieces)

    def calibrate(
        self,
        frame: np.ndarray,
        pose: BoardPose,
        known: dict[str, Content],
        *,
        unchanged: bool = False,
    ) -> None:
        """Teach the reader what ``known`` cells look like in ``frame`` (after an accepted move;
        ``unchanged``: a board judged unchanged, :meth:`~vision.readers.Reader.calibrate`)."""
        self.reader(pose.geometry).calibrate(frame, pose, known, unchanged=unchanged)

    def read_image(self, frame: np.ndarray, t: float = 0.0) -> tuple[Observation, BoardPose]:
        """Read one photo: locate the board and read every visible cell. Raises
        :class:`BoardNotFound` (with a reason) when no board is found."""
        self.locator.reset()
        pose = self.locator.locate(frame, t)
        return self.reader(pose.geometry).read(frame, pose), pose


__all__ = [
    "MOVING",
    "NO_BOARD",
    "OCCLUDED",
    "SETTLED",
    "STILL_OCCLUDED",
    "FrameResult",
    "VisionPipeline",
]
