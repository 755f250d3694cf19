"""Fitting jobs on several processes."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from multiprocessing import get_context
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def parallel_map(
    job: Callable[[J], R], jobs: Sequence[J], workers: int | None = None, chunksize: int = 1
) -> list[R]:
    """``[job(j) for j in jobs]``, in order, on ``workers`` processes (default: every core; 1:
    in this process). The workers are forked from a fresh server process, not from this one:
    a child forked after OpenCV has started its threads here (a model loaded, an image
    resized) waits forever on their locks. Like ``spawn``, the server imports the calling
    script again: a script that calls this keeps its work under
    ``if __name__ == "__main__":`` (``referee``'s entry point does)."""
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        return [job(j) for j in jobs]
    with get_context("forkserver").Pool(workers) as pool:
        return list(pool.imap(job, jobs, chunksize=chunksize))
