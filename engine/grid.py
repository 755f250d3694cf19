"""Square-grid helpers shared by the grid games: cell names like ``a1`` (file, rank)."""

from __future__ import annotations

from .core import FormatError

FILES = "abcdefghijklmnopqrstuvwxyz"


def square_name(col: int, row: int) -> str:
    """``(0, 0)`` -> ``"a1"``: ``col`` counts files from the left, ``row`` ranks from the bottom."""
    return f"{FILES[col]}{row + 1}"


def parse_square(name: str) -> tuple[int, int]:
    """``"c10"`` -> ``(2, 9)``; raises :class:`FormatError` for anything else."""
    if len(name) < 2 or name[0] not in FILES or not name[1:].isdigit():
        raise FormatError(f"not a square name: {name!r}")
    return FILES.index(name[0]), int(name[1:]) - 1


def square_names(cols: int, rows: int) -> tuple[str, ...]:
    """All squares of a ``cols`` x ``rows`` board, rank by rank from ``a1``."""
    return tuple(square_name(c, r) for r in range(rows) for c in range(cols))
