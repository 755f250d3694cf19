"""``referee run`` as a careless user runs it: twice on one journal, on a folder it cannot write,
after a finished game, on the simulated table, with a bad frame rate."""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cv2
import pytest
from luma.core.device import dummy

from engine import Event
from firmware.camera import ImageFolder
from firmware.cli import main
from firmware.display import Display
from firmware.journal import CURRENT, Journal
from firmware.lock import JournalBusy, JournalLock
from firmware.loop import RefereeLoop

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, journal: Path | None = None, records: Path | None = None) -> Path:
    journal = journal or tmp_path / "journal"
    records = records or tmp_path / "records"
    path = tmp_path / "config.toml"
    path.write_text(
        f'[journal]\ndirectory = "{journal}"\nrecords = "{records}"\n'
        f'[display]\noutput = "{tmp_path / "screens"}"\n',
        encoding="utf-8",
    )
    return path


def _loop(journal: Path, records: Path) -> RefereeLoop:
    camera = ImageFolder.__new__(ImageFolder)  # not read: only the game set-up is exercised
    display = Display(dummy(width=128, height=64, mode="1"))
    return RefereeLoop(camera, display, game="gobblet", journal_dir=journal, records_dir=records)


def _referee(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "run", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
    )


def test_a_second_referee_on_the_same_journal_is_refused_naming_the_first(tmp_path):
    """Two real processes: the second exits at once, naming the first one's pid, and the first
    one's game goes on in the journal untouched."""
    config = _config(tmp_path)
    run = ["--simulate", "gobblet", "--config", str(config), "--fps", "50"]
    first = _referee(*run)
    try:
        assert first.stdout is not None
        accepted = []
        for line in first.stdout:
            if line.startswith("[play] move "):
                accepted.append(line.split()[2])
            if len(accepted) == 2:
                break
        assert len(accepted) == 2, first.stderr.read() if first.stderr else ""
        journal = tmp_path / "journal" / "simulated" / CURRENT
        before = journal.read_bytes()

        start = time.monotonic()
        second = _referee(*run)
        out, err = second.communicate(timeout=30)
        assert time.monotonic() - start < 5.0
        assert second.returncode == 2
        assert err.strip().splitlines() == [
            f"referee: another referee (pid {first.pid}) is using the journal in "
            f"{tmp_path / 'journal' / 'simulated'}: stop it first (or give this one its own "
            "[journal] "
            "directory)"
        ]
        assert out == ""  # refused before it opened a camera or a display
        assert journal.read_bytes().startswith(before)  # only the first one wrote, after
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    resumed = Journal(journal).resume()
    assert resumed.problems == ()
    assert [str(m) for m in resumed.referee.game.history][:2] == accepted


def test_the_lock_dies_with_its_process_and_names_it_meanwhile(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from firmware.lock import JournalLock; "
            "JournalLock.acquire(sys.argv[1]); print('locked', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    with pytest.raises(JournalBusy) as busy:
        JournalLock.acquire(tmp_path)
    assert busy.value.pid == holder.pid
    holder.kill()  # kill -9: no clean-up, the kernel drops the lock
    holder.wait()
    with JournalLock.acquire(tmp_path):
        pass


@pytest.mark.parametrize("which", ["journal", "records"])
def test_an_unwritable_folder_is_a_one_line_error_before_the_game(tmp_path, which, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    folders = {which: blocker / which}
    config = _config(tmp_path, folders.get("journal"), folders.get("records"))
    assert main(["run", "--config", str(config), "--frames", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"referee: cannot write the {which} in {blocker / which}: Not a directory; choose a "
        f"writable folder with [journal] {'directory' if which == 'journal' else 'records'} "
        "in your config file"
    ]
    assert "new game" not in captured.out


def test_a_finished_game_in_the_journal_is_kept_as_a_record_and_a_new_game_starts(tmp_path):
    journal, records = tmp_path / "journal", tmp_path / "records"
    loop = _loop(journal, records)
    loop.event(Event("resign", "black"))  # white wins; the loop saves the record at once
    assert loop.referee is not None and loop.referee.game.winner == "white"
    finished = loop.referee.game.to_record()
    loop.close()  # the referee is stopped (or killed) on the game-over screen

    again = _loop(journal, records)
    try:
        assert again.referee is not None
        assert again.referee.game.history == () and not again.referee.game.is_over
        saved = sorted(records.glob("*.json"))
        assert len(saved) == 1  # kept once, not once more at every start
        assert json.loads(saved[0].read_text()) == finished
        assert Journal(journal / CURRENT).resume().entries == 0
    finally:
        again.close()


def test_a_finished_game_never_saved_is_archived_at_the_next_start(tmp_path):
    """Killed between the last move's journal line and its record: the record is made now."""
    journal, records = tmp_path / "journal", tmp_path / "records"
    with Journal.create(journal / CURRENT, "gobblet", {}) as written:
        written.append({"event": "resign", "player": "white"})
    loop = _loop(journal, records)
    try:
        assert loop.referee is not None and not loop.referee.game.is_over
        (record,) = records.glob("*.json")
        assert json.loads(record.read_text())["actions"] == [{"event": "resign", "player": "white"}]
    finally:
        loop.close()


def test_an_unfinished_game_still_resumes(tmp_path):
    journal, records = tmp_path / "journal", tmp_path / "records"
    with Journal.create(journal / CURRENT, "gobblet", {}) as written:
        written.append({"move": "4@a1", "player": "white"})
    loop = _loop(journal, records)
    try:
        assert loop.referee is not None
        assert [str(m) for m in loop.referee.game.history] == ["4@a1"]
        assert list(records.glob("*.json")) == []
    finally:
        loop.close()


def test_simulate_plays_the_synthetic_table_without_a_config_or_a_display(
    tmp_path, capsys, monkeypatch
):
    config = _config(tmp_path)  # only to keep the journal out of the home folder
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no keys typed
    run = ["run", "--simulate", "gobblet", "--config", str(config), "--fps", "100"]
    code = main([*run, "--frames", "40"])
    out = capsys.readouterr().out
    assert code == 0
    assert "no display to open a window on" in out
    assert "[play] move " in out
    assert list((tmp_path / "screens").glob("screen_*.png"))
    # its own journal, never the real table's; and every run plays the script from the start
    assert (tmp_path / "journal" / "simulated" / CURRENT).exists()
    assert not (tmp_path / "journal" / CURRENT).exists()
    assert main([*run, "--frames", "40"]) == 0
    again = capsys.readouterr().out
    assert "new game of gobblet" in again and "resumed" not in again
    assert "[play] move " in again


@pytest.mark.parametrize("fps", ["0", "-1", "nan", "fast"])
def test_a_frame_rate_that_is_not_positive_is_refused_in_one_line(fps):
    proc = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "run", "--fps", fps],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("referee run: error: argument --fps:")


def test_the_renderer_is_no_part_of_the_production_path(tmp_path):
    """`referee run` with a camera (here a folder of photos) and `referee read` never import the
    synthetic renderer; only the simulated table does, when asked for."""
    from vision.synth import render_scene

    folder = tmp_path / "frames"
    folder.mkdir()
    cv2.imwrite(str(folder / "0.jpg"), render_scene("gobblet", {}, 1, hand=False).image)
    config = tmp_path / "folder.toml"
    config.write_text(
        f'[camera]\nsource = "folder"\npath = "{folder}"\n[display]\ndriver = "dummy"\n'
        f'[journal]\ndirectory = "{tmp_path / "journal"}"\nrecords = "{tmp_path / "records"}"\n',
        encoding="utf-8",
    )
    script = (
        "import sys\n"
        "from firmware.cli import main\n"
        f"main(['run', '--config', {str(config)!r}, '--frames', '2'])\n"
        f"main(['read', {str(folder / '0.jpg')!r}])\n"
        "print('RENDERER', 'vision.synth' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert "[check board] board found: gobblet" in done.stdout, done.stderr
    assert "gobblet: 8 markers seen" in done.stdout, done.stderr
    assert done.stdout.splitlines()[-1] == "RENDERER False"


def test_doctor_says_when_the_journal_cannot_be_written(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    config = _config(tmp_path, journal=blocker / "journal")
    main(["doctor", "--config", str(config)])
    lines = capsys.readouterr().out.splitlines()
    assert (
        f"  [!!] journal: cannot write the journal in {blocker / 'journal'}: Not a directory; "
        "choose a writable folder with [journal] directory in your config file" in lines
    )
    config = _config(tmp_path)
    main(["doctor", "--config", str(config)])
    assert f"  [ok] journal: {tmp_path / 'journal'} is writable and free" in (
        capsys.readouterr().out.splitlines()
    )
