"""sd_notify over a real UNIX datagram socket, as systemd listens on it."""

import os
import socket

import pytest

from firmware.watchdog import Notifier


@pytest.fixture
def server(tmp_path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(tmp_path / "notify"))
        sock.settimeout(1.0)
        yield sock


def received(sock):
    sock.settimeout(0.2)
    messages = []
    while True:
        try:
            messages.append(sock.recv(4096).decode())
        except TimeoutError:
            return messages


def test_ready_and_pings_at_most_every_half_watchdog_period(server):
    now = [0.0]
    notifier = Notifier(server.getsockname(), watchdog_seconds=30.0, clock=lambda: now[0])
    notifier.ready("refereeing")
    for t in (0.0, 1.0, 14.9, 15.0, 20.0, 30.1):
        now[0] = t
        notifier.ping()
    assert received(server) == ["READY=1\nSTATUS=refereeing", "WATCHDOG=1", "WATCHDOG=1",
                                "WATCHDOG=1"]  # fmt: skip


def test_an_abstract_socket_name(tmp_path):
    name = f"@referee-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name[1:])
        Notifier.from_environment({"NOTIFY_SOCKET": name}).ready()
        assert sock.recv(100) == b"READY=1"


def test_the_environment_systemd_sets(server):
    path = server.getsockname()
    ours = Notifier.from_environment(
        {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    )
    assert ours.active and ours.watchdog_seconds == 30.0 and ours.ping_every == 15.0
    other = Notifier.from_environment({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000",
                                       "WATCHDOG_PID": "1"})  # fmt: skip
    assert other.watchdog_seconds is None  # the watchdog is another process's
    other.ping()
    assert received(server) == []


def test_outside_systemd_or_with_the_socket_gone_nothing_fails(tmp_path):
    assert not Notifier.from_environment({}).active
    assert Notifier.from_environment({}).send("READY=1") is False
    gone = Notifier(str(tmp_path / "nobody-listens"), watchdog_seconds=1.0)
    gone.ping()
    assert gone.send("WATCHDOG=1") is False
