"""What a careless user gets wrong on the command line: each is one line on stderr naming the
problem (and the fix), a non-zero exit, and never a traceback."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from engine import new_game
from firmware.cli import main
from firmware.journal import save_record
from vision.synth import render_scene

ROOT = Path(__file__).resolve().parents[1]


def _stderr_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    return err[0]


def _board(game: str, **cells: object) -> dict:
    board = new_game(game)
    out = board.observation_to_json(board.current_observation())
    out["cells"].update(cells)
    return out


def _write_lines(path: Path, *items: object) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def test_a_replay_file_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "game.jsonl"
    path.write_bytes(b'{"event": "start"}\n\xff\xfe\x00garbage\n')
    assert main(["replay", str(path), "--game", "gobblet"]) == 2
    assert _stderr_line(capsys) == (
        f"referee: {path} is not UTF-8 text (byte 0xff at offset 19): expected JSON Lines of "
        "observations and events"
    )


def test_a_config_file_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "config.toml"
    path.write_bytes(b'[camera]\nsource = "\xff"\n')
    assert main(["run", "--config", str(path)]) == 2
    assert _stderr_line(capsys) == (
        f"referee: {path}: not UTF-8 text (byte 0xff at offset 19); save it as UTF-8"
    )


def _closed_pipe_run(*argv: str) -> subprocess.CompletedProcess:
    """Run ``referee ARGV`` with its output into a pipe nobody reads (``| head`` gone)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "firmware.cli", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_output_piped_into_a_reader_that_left(tmp_path, json_flag):
    game = new_game("gobblet")
    game.play(game.parse_move("4@a1"))
    replay = save_record(game, tmp_path).replay
    for argv in (["games"], ["replay", str(replay), "--game", "gobblet", *json_flag]):
        done = _closed_pipe_run(*argv)
        assert done.returncode == 1
        assert done.stderr == "referee: output closed before the end (broken pipe)\n"


def test_replay_exits_1_when_a_line_is_garbage(tmp_path, capsys):
    path = tmp_path / "game.jsonl"
    path.write_text('{"event": "start"}\nthis is no JSON\n', encoding="utf-8")
    assert main(["replay", str(path), "--game", "gobblet", "--json"]) == 1
    assert _stderr_line(capsys) == f"referee: 1 line(s) of {path} could not be read (line 2)"


def test_replay_of_a_record_instead_of_its_stream_says_which_file_to_give(tmp_path, capsys):
    game = new_game("gobblet")
    game.play(game.parse_move("4@a1"))
    saved = save_record(game, tmp_path, stem="night")
    assert main(["replay", str(saved.record), "--game", "gobblet"]) == 1
    line = _stderr_line(capsys)
    assert line.startswith(f"referee: {len(saved.record.read_text().splitlines())} line(s) of")
    assert line.endswith(f": night.json is a game record; replay {saved.replay}")


def test_replay_with_the_wrong_game_exits_1(tmp_path, capsys):
    path = _write_lines(tmp_path / "game.jsonl", _board("gobblet"))
    assert main(["replay", str(path), "--game", "blokus", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["reason"] == "unreadable: observation is of gobblet, the game is blokus"


def test_replay_enforces_the_partial_rule(tmp_path, capsys):
    """shared/spec/observation.md: 'A reader may omit cells only when it also sets
    "partial": true'."""
    board = _board("gobblet", a1={"color": "white", "size": 4})
    del board["cells"]["d4"], board["cells"]["c4"]
    path = _write_lines(tmp_path / "hidden.jsonl", board)
    assert main(["replay", str(path), "--game", "gobblet", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "ambiguous"
    assert out["reason"] == 'unreadable: 2 cells missing (c4, d4) without "partial": true'
    path = _write_lines(tmp_path / "flagged.jsonl", {**board, "partial": True})
    assert main(["replay", str(path), "--game", "gobblet", "--json"]) == 0
    assert "partly hidden" in json.loads(capsys.readouterr().out)["reason"]


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("photo") / "board.jpg"
    scene = render_scene("gobblet", {}, 2, hand=False)
    cv2.imwrite(str(path), scene.image)
    return path


def test_a_truncated_jpeg_is_reported_corrupt_not_read(photo, tmp_path, capsys):
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(photo.read_bytes()[: photo.stat().st_size * 2 // 3])
    assert main(["read", str(photo), "--json"]) == 0  # the whole photo is read
    capsys.readouterr()
    assert main(["read", str(cut)]) == 2
    assert _stderr_line(capsys) == (
        f"referee: {cut} is a corrupt JPEG: it stops before its end (cut short while copied?)"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory"),
        (b"", "{path} is empty"),
        (b"hello, world\n", "{path} is not an image OpenCV can read (JPEG, PNG, BMP, TIFF...)"),
    ],
)
def test_read_of_no_image_is_our_one_line_without_an_opencv_warning(tmp_path, content, message):
    path = tmp_path / "photo.png"
    if content is not None:
        path.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "read", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr == f"referee: {message.format(path=path)}\n"


@pytest.mark.parametrize("dpi", ["0", "-300"])
def test_mat_refuses_a_resolution_that_is_not_positive(tmp_path, dpi, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["mat", "gobblet", "--out", str(tmp_path / "mat.png"), "--dpi", dpi])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"referee mat: error: argument --dpi: must be above 0, not {dpi}"
    )
    assert not (tmp_path / "mat.png").exists()


def test_ctrl_c_in_the_demo_is_one_line_and_exit_130(tmp_path, python_handles_ctrl_c):
    demo = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "demo", "--game", "gobblet", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert demo.stdout.readline().startswith("== gobblet ==")
    for _ in range(3):  # the referee's first verdicts: its models loaded, playing now
        assert demo.stdout.readline().strip()
    demo.send_signal(signal.SIGINT)
    _, err = demo.communicate(timeout=60)
    assert demo.returncode == 130
    assert err == "referee: stopped\n"
