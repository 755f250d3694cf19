"""What a view of the board gives, kept while the view holds: a still board keeps its pose."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

_NOTHING = object()


class LastView(Generic[T]):
    """A one-slot cache: the value worked out for the last key (a pose's
    :meth:`~vision.locate.BoardPose.view_key`, with whatever else the value depends on).

    A still board keeps its homography (the locator's deadband), so what depends on the view
    alone is worked out again only when the board moves or another key is asked for."""

    def __init__(self) -> None:
        self._key: Hashable = _NOTHING
        self._value: T | None = None

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value for ``key``: the kept one when ``key`` is the last key, else
        ``compute()`` (kept in its place; nothing is kept when it raises)."""
        if self._key is _NOTHING or self._key != key:
            value = compute()
            self._key, self._value = key, value
        return self._value  # type: ignore[return-value]
