"""``referee demo --web`` and ``referee run --web`` as a user starts them."""

import json
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from firmware.cli import main


def test_demo_web_serves_the_game_being_played(tmp_path, python_handles_ctrl_c):
    command = [
        sys.executable,
        "-m",
        "firmware.cli",
        "demo",
        "--game",
        "gobblet",
        "--quiet",
        "--out",
        str(tmp_path),
        "--web",
        "127.0.0.1:0",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("referee: live page at http://127.0.0.1:")
        url = line.split(" at ")[1].strip()
        deadline = time.monotonic() + 60
        state = {}
        while time.monotonic() < deadline and not state.get("moves"):
            time.sleep(0.5)
            with urllib.request.urlopen(url + "api/state", timeout=5) as answer:
                state = json.loads(answer.read())
        assert state["game"] == "gobblet" and state["moves"], state
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C in the middle of a game
        _, err = process.communicate(timeout=20)
    assert "Traceback" not in err
    assert process.returncode == 0


@pytest.mark.parametrize("command", ["demo", "run"])
def test_a_bad_address_is_one_line_and_exit_2(command, tmp_path, capsys):
    assert main([command, "--web", "somewhere:http"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "referee: --web expects [HOST:]PORT, not 'somewhere:http'"


def test_a_taken_port_is_one_line_and_exit_2(tmp_path, capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo", "--out", str(tmp_path), "--web", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"referee: cannot serve the page on 127.0.0.1:{port}")
    assert len(err.splitlines()) == 1


def test_run_web_serves_the_appliances_game(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        '[camera]\nsource = "synthetic"\nfps = 10.0\nsynthetic_game = "gobblet"\nseed = 1\n'
        '[display]\ndriver = "dummy"\n'
        f'[journal]\ndirectory = "{tmp_path}/journal"\nrecords = "{tmp_path}/records"\n',
        encoding="utf-8",
    )
    command = [
        sys.executable,
        "-m",
        "firmware.cli",
        "run",
        "--game",
        "gobblet",
        "--config",
        str(config),
        "--fps",
        "30",
        "--web",
        "127.0.0.1:0",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("referee: live page at http://127.0.0.1:"), line
        url = line.split(" at ")[1].strip()
        deadline = time.monotonic() + 60
        state = {}
        while time.monotonic() < deadline and not state.get("moves") and process.poll() is None:
            time.sleep(0.2)
            with urllib.request.urlopen(url + "api/state", timeout=5) as answer:
                state = json.loads(answer.read())
        assert state["game"] == "gobblet" and state["moves"], state
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    assert process.returncode == 0
