"""What the status line says of the camera's view of the mat, held steady.

A frame's pose says whether its markers look too small (``BoardPose.too_far``), are read only
with the paper's light taken off their black (``markers_bled``: over-exposed), or are found only
from their outlines, their bits too blurred to read one by one (``markers_registered``); the
frame's result, whether the accepted boards have contradicted this table's reads beyond chance
(``FrameResult.reads_unsure``: a light that makes the pieces hard to read). Such a
condition comes and goes from frame to frame as noise moves a marker across the detector's
limits; a status line that followed every frame would flicker at the camera's rate, too fast to
read. A line is therefore shown from the first frame with its condition until ``hold_s``
seconds after the last one, and the most pressing one held is shown.
"""

from __future__ import annotations

from vision.adapt import READS_UNSURE
from vision.locate import MARKERS_BLURRED, OVER_EXPOSED, TOO_FAR, BoardPose

#: most pressing first: a camera too far is the cause of the others
LINES = (TOO_FAR, OVER_EXPOSED, MARKERS_BLURRED, READS_UNSURE)


class ViewStatus:
    """The status line of the camera's view: ``update(pose, t)`` per frame, the line to show."""

    def __init__(self, hold_s: float = 3.0) -> None:
        self.hold_s = hold_s
        self._last: dict[str, float] = {}

    def update(self, pose: BoardPose | None, t: float, reads_unsure: bool = False) -> str:
        """The line for a frame taken at ``t`` whose pose is ``pose`` (None: no board found,
        which says nothing of the markers or the reads) and whose reads are ``reads_unsure``;
        "" when nothing is to be said."""
        if pose is not None:
            markers = (pose.too_far, bool(pose.markers_bled), bool(pose.markers_registered))
            shown = (*markers, reads_unsure)
            for line, now in zip(LINES, shown, strict=True):
                if now:
                    self._last[line] = t
        for line in LINES:
            if line in self._last and t - self._last[line] <= self.hold_s:
                return line
        return ""
