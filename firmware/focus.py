"""How sharp the camera's picture is, measured on the mat's markers (``referee doctor``).

A marker's border is a black-to-white step. Blur spreads it: a step of contrast C blurred by a
Gaussian of sigma s has a steepest slope of C / (s sqrt(2 pi)), and its 10-90 % rise is 2.56 s,
about C / slope. :func:`edge_width` is that figure, in pixels, the median over the markers seen:
about 1 px for a sharp picture, several px for a lens focused at the wrong distance.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.locate import BoardPose

#: An edge spread over more pixels than this is out of focus (``referee doctor`` says so).
#: The renderer's 1280x960 scenes (which carry some blur of their own) measure 1.9-3.2 px, the
#: same blurred by a Gaussian of sigma 1.5 px 4.1-4.8 px and of sigma 2.5 px 6.1-6.5 px (three
#: games, two seeds each; tests/firmware/test_focus.py keeps the two sides of this line).
SOFT_EDGE_PX = 3.5


def edge_width(frame: np.ndarray, pose: BoardPose) -> float | None:
    """The median 10-90 % width (px) of the edges of the markers seen; ``None`` without any."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    gray = gray.astype(np.float32)
    widths = []
    seen = set(pose.markers_seen)
    for marker in pose.geometry.markers:
        if marker.id not in seen:
            continue
        # the marker with its white border: a quarter of its side around it
        outline = marker.corners().astype(np.float64)
        centre = outline.mean(axis=0)
        corners = pose.to_image((outline - centre) * 1.25 + centre).astype(np.int32)
        x, y, w, h = cv2.boundingRect(corners)
        x, y = max(x, 0), max(y, 0)
        patch = gray[y : y + h, x : x + w]
        if patch.shape[0] < 8 or patch.shape[1] < 8:
            continue
        gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3) / 8.0  # Sobel is 8x the slope per px
        gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3) / 8.0
        slope = float(np.percentile(np.hypot(gx, gy), 99.5))
        contrast = float(np.percentile(patch, 95) - np.percentile(patch, 5))
        if slope > 0 and contrast > 40:  # a marker in view, not a blank or dark patch
            widths.append(contrast / slope)
    return float(np.median(widths)) if widths else None
