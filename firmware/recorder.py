"""``[record] frames = true``: every accepted position's settled frame saved as a labelled photo.

For each position the referee accepts (a legal move, or the opening it checked), the frame that
was judged is saved as ``NAME.jpg`` and its truth as ``NAME.json`` in the format that
``referee bench vision --photos`` scores (``vision-samples/README.md``)::

    {"game": "gobblet", "cells": {...every cell...}, "occluded": false, "occluded_cells": [],
     "t": 12.3}

``cells`` is the referee's accepted position, so every game played on a real table adds labelled
photos of that table. ``NAME`` is ``GAME-YYYYmmdd-HHMMSS-NNNN`` (the session's start, then a
count). The files are written by a thread of their own, each atomically (a temporary file,
fsync'ed, renamed), the photo before its label: the loop never waits for the disk, and a full or
missing disk costs one warning (:meth:`FrameRecorder.warning`), never the game.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .journal import write_atomically

#: Frames waiting to be written at most; more are dropped (with the one warning).
QUEUE_SIZE = 4
JPEG_QUALITY = 95


class FrameRecorder:
    """Writes labelled frames into ``directory`` in the background."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._stamp = time.strftime("%Y%m%d-%H%M%S")
        self._count = itertools.count(1)
        self._queue: queue.Queue[tuple[np.ndarray, dict[str, Any]] | None] = queue.Queue(QUEUE_SIZE)
        self._lock = threading.Lock()
        self._warning: str | None = None
        self._warned = False
        self._thread = threading.Thread(target=self._work, name="frame-recorder", daemon=True)
        self._thread.start()

    def save(self, frame: np.ndarray, label: dict[str, Any]) -> None:
        """Queue ``frame`` (BGR) and its ``label`` (``game``, ``cells``, ...) to be written;
        returns at once."""
        try:
            self._queue.put_nowait((frame.copy(), label))
        except queue.Full:
            self._warn(f"frame not saved in {self.directory}: the disk is too slow")

    def warning(self) -> str | None:
        """The first problem met, once (then ``None``): frames are not being saved."""
        with self._lock:
            warning, self._warning = self._warning, None
        return warning

    def close(self) -> None:
        """Write the queued frames and stop the thread (again: nothing)."""
        if not self._thread.is_alive():
            return
        self._queue.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            frame, label = item
            try:
                self._write(frame, label)
            except OSError as exc:
                self._warn(f"cannot save frames in {self.directory}: {exc.strerror or exc}")

    def _write(self, frame: np.ndarray, label: dict[str, Any]) -> None:
        ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            raise OSError(f"the {frame.shape} frame cannot be encoded as JPEG")
        self.directory.mkdir(parents=True, exist_ok=True)
        while True:  # a name no earlier session used
            name = f"{label['game']}-{self._stamp}-{next(self._count):04d}"
            if not (self.directory / f"{name}.json").exists():
                break
        write_atomically(self.directory / f"{name}.jpg", jpeg.tobytes())
        write_atomically(self.directory / f"{name}.json", json.dumps(label).encode() + b"\n")

    def _warn(self, text: str) -> None:
        with self._lock:
            if not self._warned:
                self._warned, self._warning = True, text
