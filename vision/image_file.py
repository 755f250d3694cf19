"""Photos read from disk, with one clear error for each way a file can be wrong.

``cv2.imread`` answers a missing, cut or foreign file with ``None`` (and a warning on stderr from
OpenCV or libjpeg), and decodes a JPEG cut short by a copy as far as it goes, filling the rest
grey: such a photo would be read as a board. :func:`read_image` reads the bytes itself, checks that
a JPEG or PNG ends with its end marker, and only then decodes them.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

JPEG_START, JPEG_END = b"\xff\xd8", b"\xff\xd9"
PNG_START, PNG_END = b"\x89PNG\r\n\x1a\n", b"IEND\xaeB`\x82"


class ImageFileError(ValueError):
    """A photo that cannot be used; the message names the file and the problem."""


def read_image(path: str | Path) -> np.ndarray:
    """The BGR image in the file at ``path``; :class:`ImageFileError` if it is missing,
    unreadable, truncated or not an image."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not data:
        raise ImageFileError(f"{path} is empty")
    end = data.rstrip(b"\0")  # some cameras pad a JPEG with zeros after its end marker
    for kind, start, marker in (("JPEG", JPEG_START, JPEG_END), ("PNG", PNG_START, PNG_END)):
        if data.startswith(start) and not end.endswith(marker):
            raise ImageFileError(
                f"{path} is a corrupt {kind}: it stops before its end (cut short while copied?)"
            )
    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        raise ImageFileError(f"{path} is not an image OpenCV can read (JPEG, PNG, BMP, TIFF...)")
    return frame
