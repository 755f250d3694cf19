"""The path-traced probe's parts that need no Mitsuba: its cone, its tally and its missing-renderer
error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vision.train.probe_pathtraced import CONE_BALL, PathTracedGobblet, cone_profile, size_errors


def test_cone_rises_from_its_foot_to_a_ball() -> None:
    profile = cone_profile(24.0, 46.0)
    cone, ball = profile[:10], profile[10:]  # the neck reaches into the ball
    assert cone[0] == (0.0, 1.0) and ball[-1][0] == 1.0
    for part in (cone, ball):
        assert [t for t, _ in part] == sorted(t for t, _ in part)
    assert [r for _, r in cone] == sorted((r for _, r in cone), reverse=True)
    assert cone[-1][1] < max(r for _, r in ball) <= CONE_BALL + 0.011


def test_size_errors_tells_small_large_and_colour() -> None:
    truth = {"a1": {"color": "white", "size": 2}, "b1": None, "c1": {"color": "black", "size": 3}}
    read = {
        "a1": {"color": "white", "size": 1},
        "b1": {"color": "black", "size": 1},
        "c1": {"color": "white", "size": 3},
    }
    counts = size_errors(truth, read)
    assert counts == {(2, "small"): 1, (0, "large"): 1, (3, "colour"): 1}


def test_without_mitsuba_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "mitsuba", None)  # import mitsuba raises ImportError
    with pytest.raises(SystemExit, match="pip install mitsuba"):
        PathTracedGobblet(tmp_path)
