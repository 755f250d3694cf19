"""``referee export`` and ``referee diagram`` on saved records and journals."""

import json
import re
import subprocess
import sys

import pytest
from PIL import Image

from engine import Referee
from firmware.cli import main
from firmware.journal import Journal, save_record
from firmware.records import load_game, log
from tests.firmware.games import random_game


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("records")
    out = {}
    for name in ("gobsmacked", "spectrangle", "gobblet", "blokus", "blokus-duo"):
        game = random_game(name, 4, actions=12)
        out[name] = (game, save_record(game, tmp_path, f"game-{name}").record)
    return out


def test_txt_lists_every_action_with_its_score_change(records, capsys):
    game, path = records["spectrangle"]
    assert main(["export", str(path), "--format", "txt"]) == 0
    lines = capsys.readouterr().out.splitlines()
    body = [line for line in lines if not line.startswith("#")]
    assert len(body) == len(game.history)
    for line, entry in zip(body, log(game), strict=True):
        assert entry.action in line
        for player, delta in entry.score_change.items():
            assert f"{player}{delta:+d}" in line
    assert lines[-1].startswith("# result: ") and "p1 " in lines[-1]


def test_jsonl_replays_to_the_same_scores(records, tmp_path):
    for name, (game, path) in records.items():
        out = tmp_path / f"{name}.jsonl"
        assert main(["export", str(path), "--format", "jsonl", "--out", str(out)]) == 0
        referee = Referee(name)
        for line in out.read_text().splitlines():
            referee.feed(json.loads(line))
        assert referee.game.scores == game.scores, name
        assert referee.game.view() == game.view(), name


def test_a_journal_exports_like_its_record(records, tmp_path, capsys):
    game, record = records["gobblet"]
    journal = Journal.create(tmp_path / "current.jsonl", "gobblet", game.options)
    for action in game.history:
        journal.append({"move": str(action)})
    journal.append({"broken": True})  # a line the referee would skip on resuming
    journal.close()
    assert main(["export", str(record), "--format", "txt"]) == 0
    from_record = capsys.readouterr().out
    assert main(["export", str(journal.path), "--format", "txt"]) == 0
    assert capsys.readouterr().out == from_record
    assert load_game(journal.path).history == game.history


def test_sgf_of_a_blokus_duo_record_names_the_dialect(records, capsys):
    _, path = records["blokus-duo"]
    assert main(["export", str(path), "--format", "sgf"]) == 0
    text = capsys.readouterr().out
    assert "GM[Blokus Duo]" in text and re.search(r";B\[[a-n]\d+(,[a-n]\d+)*\]", text)


@pytest.mark.parametrize(
    "content,reason",
    [
        (b"\xff\xfe not text", "not UTF-8"),
        (b"[1, 2]", "not a game record"),
        (b'{"game": "chess", "actions": []}', "unknown game"),
        (b'{"game": "gobblet", "actions": ["9@z9"]}', "record action 1"),
        (b'{"game": "gobblet", "options": 3, "actions": []}', "'options' must be an object"),
        (b"garbage", "neither a game record nor a journal"),
    ],
)
def test_bad_records_get_one_line_and_exit_2(tmp_path, content, reason, capsys):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    for command in (
        ["export", str(path), "--format", "txt"],
        ["diagram", str(path), "--out", str(tmp_path / "x.svg")],
    ):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert reason in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.svg").exists()


def test_the_console_script_says_it_in_one_line(tmp_path):
    missing = tmp_path / "missing.json"
    run = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "export", str(missing), "--format", "txt"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == f"referee: cannot read {missing}: No such file or directory"


def test_sgf_of_another_game_is_refused_plainly(records, capsys):
    _, path = records["blokus"]
    assert main(["export", str(path), "--format", "sgf"]) == 2
    assert "Blokus Duo" in capsys.readouterr().err


def test_diagram_writes_svg_and_png_of_any_move(records, tmp_path, capsys):
    _, path = records["gobblet"]
    svg, png = tmp_path / "g.svg", tmp_path / "g.png"
    assert main(["diagram", str(path), "--move", "3", "--out", str(svg)]) == 0
    assert main(["diagram", str(path), "--out", str(png)]) == 0
    text = svg.read_text()
    assert text.startswith("<svg") and "<script" not in text
    assert text.count('data-content="white') + text.count('data-content="black') == 3
    with Image.open(png) as image:
        assert image.size[0] > 200
    assert main(["diagram", str(path), "--move", "999", "--out", str(svg)]) == 2
    assert main(["diagram", str(path), "--out", str(tmp_path / "g.gif")]) == 2
    assert "--out must end in .svg or .png" in capsys.readouterr().err


def test_the_live_move_log_follows_moves_and_undos():
    from firmware.records import MoveLog

    game = random_game("spectrangle", 5, actions=6)
    live = MoveLog()
    assert live.update(game) == log(game)
    game.undo()
    game.undo()
    assert live.update(game) == log(game)  # rebuilt after an undo
    game.play(next(iter(game.legal_moves())))
    assert live.update(game) == log(game) and len(live.entries) == len(game.history)
