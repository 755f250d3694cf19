"""The training's worker processes start even after OpenCV has started threads in the parent
(a model loaded, an image filtered): a plain fork there left every worker waiting forever."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import cv2
    import numpy as np

    from vision.train.pool import parallel_map


    def job(i):
        cv2.setNumThreads(1)  # what every training job does first
        return int(cv2.resize(np.full((64, 64), i, np.uint8), (8, 8)).sum())


    if __name__ == "__main__":
        cv2.setNumThreads(4)
        frame = np.random.default_rng(0).integers(0, 255, (1500, 1500, 3), dtype=np.uint8)
        cv2.GaussianBlur(frame, (31, 31), 5)  # OpenCV's threads are running now
        print(parallel_map(job, range(4), workers=2))
    """
)


def test_workers_start_after_opencv_threads_in_the_parent(tmp_path):
    script = tmp_path / "jobs.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 64, 128, 192]"
