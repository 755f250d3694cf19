"""The live page's server: its interface, read-only and bounded, fed by the real loop."""

import contextlib
import http.client
import json
import socket
import threading
import time

import pytest

from firmware.journal import save_record
from firmware.web.server import CSP, Limits, WebServer, parse_listen
from tests.firmware.games import random_game
from tests.firmware.web_game import make_loop, step_until_moves


def get(server, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path)
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    return answer.status, dict(answer.getheaders()), body


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A server fed by a loop that accepted 3 Gobblet moves; a finished Blokus Duo record."""
    tmp = tmp_path_factory.mktemp("web")
    duo = random_game("blokus-duo", 2)
    save_record(duo, tmp / "records", "20260101-120000-blokus-duo")
    server = WebServer("127.0.0.1", 0, records_dir=tmp / "records").start()
    loop, table = make_loop(server.feed, tmp)
    step_until_moves(loop, table, 3)
    time.sleep(0.2)  # the last state crosses to the server's thread
    yield server, loop, duo
    loop.close()
    server.stop()


def test_state_has_the_documented_keys_and_the_loops_position(played):
    server, loop, _ = played
    status, headers, body = get(server, "/api/state")
    state = json.loads(body)
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    game = loop.referee.game
    assert state["game"] == "gobblet"
    assert state["scores"] == game.scores and state["to_move"] == game.to_move
    assert state["moves"] == [str(m) for m in game.history]
    assert state["over"] is False and state["winner"] is None
    assert state["illegal"] is None and isinstance(state["occluded"], bool)
    assert "<svg" in state["diagram"]


def test_every_answer_carries_the_strict_policy(played):
    server, _, _ = played
    for path in ("/", "/static/app.js", "/api/state", "/api/games", "/nowhere"):
        _, headers, _ = get(server, path)
        assert headers["Content-Security-Policy"] == CSP, path
        assert headers["X-Content-Type-Options"] == "nosniff"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
    _, _, page = get(server, "/")
    assert b"<script>" not in page and b" on" not in page.lower().replace(b" one", b"")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_no_write_method_is_accepted(played, method):
    server, _, _ = played
    for path in ("/", "/api/state", "/api/games", "/api/events", "/anything"):
        status, headers, _ = get(server, path, method)
        assert status == 405 and headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/%2e%2e%2fserver.py",
        "/static/..%2f..%2f..%2fetc%2fpasswd",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/../../../../etc/passwd",
        "/api/games/..%2f..%2fjournal%2fcurrent",
        "/api/games/%2e%2e",
        "/api/games/%2fetc%2fpasswd",
        "/api/games/..%5c..%5cwindows",
        "/api/games/20260101-120000-blokus-duo%00.json",
    ],
)
def test_hostile_paths_reach_no_file(played, path):
    server, _, _ = played
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.endheaders()
    answer = conn.getresponse()
    body = answer.read()
    assert answer.status in (400, 404), path
    assert b"root:" not in body and b"import" not in body and b"journal" not in body


def test_finished_games_are_listed_and_replayable(played):
    server, _, duo = played
    _, _, body = get(server, "/api/games")
    (entry,) = json.loads(body)["games"]
    assert entry["id"] == "20260101-120000-blokus-duo"
    assert entry["scores"] == duo.scores and entry["winner"] == duo.winner
    _, _, body = get(server, f"/api/games/{entry['id']}")
    details = json.loads(body)
    assert [e["action"] for e in details["log"]] == [str(m) for m in duo.history]
    status, headers, svg = get(server, f"/api/games/{entry['id']}/diagram.svg?move=1")
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
    first = duo.history[0].cells()
    assert svg.count(b'data-content="orange"') + svg.count(b'data-content="violet"') == len(first)
    assert get(server, f"/api/games/{entry['id']}/diagram.svg?move=999")[0] == 400
    status, headers, sgf = get(server, f"/api/games/{entry['id']}/export.sgf")
    assert status == 200 and b"GM[Blokus Duo]" in sgf
    assert "attachment" in headers["Content-Disposition"]


def test_the_live_game_downloads(played):
    server, loop, _ = played
    status, _, text = get(server, "/api/export.txt")
    assert status == 200
    for move in loop.referee.game.history:
        assert str(move).encode() in text
    assert get(server, "/api/export.sgf")[0] == 404  # gobblet has no SGF
    assert get(server, "/api/export.exe")[0] == 404


def test_the_camera_view_is_the_rectified_board(played):
    server, _, _ = played
    status, headers, jpeg = get(server, "/api/camera.jpg")
    assert status == 200 and headers["Content-Type"] == "image/jpeg"
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and min(image.shape[:2]) > 100


def _stream(port: int, buffer: int | None = None) -> socket.socket:
    sock = socket.socket()
    if buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock


def _read_until(sock: socket.socket, marker: bytes, limit: float = 5.0) -> bytes:
    data, end = b"", time.monotonic() + limit
    while marker not in data and time.monotonic() < end:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


class Reader(threading.Thread):
    """A viewer that reads everything as it comes."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock, self.data = sock, bytearray()

    def run(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(1 << 16):
                self.data += chunk


def test_streams_are_bounded_and_a_client_that_stops_reading_is_dropped(tmp_path):
    limits = Limits(clients=3, queue=2, write_timeout=0.5)
    with WebServer("127.0.0.1", 0, records_dir=tmp_path, limits=limits) as server:
        server.publish({"seq": 0, "pad": ""})
        streams = [_stream(server.port), _stream(server.port, 4096), _stream(server.port, 4096)]
        for sock in streams:
            assert b"event: state" in _read_until(sock, b"\n\n", 5)
        time.sleep(0.1)
        assert len(server.hub.clients) == 3
        status, _, _ = get(server, "/api/events")
        assert status == 503  # a fourth viewer is turned away
        reader = Reader(streams[0])  # the two others never read again
        reader.start()
        big = "x" * 200_000  # far more than the stalled viewers' buffers hold
        for seq in range(1, 12):
            server.publish({"seq": seq, "pad": big})
            time.sleep(0.05)
        time.sleep(1.0)
        assert server.hub.dropped == 2 and len(server.hub.clients) == 1
        server.publish({"seq": 12, "pad": ""})
        time.sleep(0.5)
        assert b'"seq":11,' in reader.data and b'"seq":12,' in reader.data  # the reader stays
        for sock in streams:
            sock.close()


def test_listen_addresses():
    assert parse_listen("8080", "192.168.1.5") == ("192.168.1.5", 8080)
    assert parse_listen("0.0.0.0:9000", "127.0.0.1") == ("0.0.0.0", 9000)
    assert parse_listen("[::1]:9000", "127.0.0.1") == ("::1", 9000)
    with pytest.raises(ValueError, match=r"\[HOST:\]PORT"):
        parse_listen("localhost:http", "127.0.0.1")
