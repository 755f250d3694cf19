"""``referee bench loop``'s memory figures, read from a real child process."""

from __future__ import annotations

import sys

from firmware.bench_loop import peak_memory_mb


def test_a_child_s_own_memory_is_measured_beside_its_resident_set():
    # a child that writes 64 MB of its own and holds them a while
    hold = (
        "b = bytearray(64 * 2**20); b[::4096] = b'x' * (len(b) // 4096); import time; time.sleep(1)"
    )
    rss, private = peak_memory_mb([sys.executable, "-c", hold])
    assert private is not None and 64 <= private <= rss < 64 + 60  # few of the interpreter's
    _, idle = peak_memory_mb([sys.executable, "-c", "import time; time.sleep(1)"])
    assert idle is not None and idle < 20 and private - idle >= 60
