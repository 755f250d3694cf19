"""systemd's notification protocol (``sd_notify``): READY=1 once started, WATCHDOG=1 pings.

With ``Type=notify`` and ``WatchdogSec=`` in the unit, systemd passes ``$NOTIFY_SOCKET`` (a UNIX
datagram socket; a leading ``@`` is an abstract one) and ``$WATCHDOG_USEC``, and restarts the
service when no ping arrives within that time: a referee loop that hangs (a camera call that never
returns) is restarted instead of sitting there. Outside systemd the notifier does nothing::

    notifier = Notifier.from_environment()
    notifier.ready()
    while True:
        ...one turn of the loop...
        notifier.ping()      # sent at most every half watchdog period
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping


class Notifier:
    """Sends ``sd_notify`` messages to ``address`` (``None``: not under systemd, do nothing)."""

    def __init__(
        self,
        address: str | None,
        watchdog_seconds: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.address = address
        self.watchdog_seconds = watchdog_seconds
        #: pings closer together than this are not sent (half the watchdog period, as systemd asks)
        self.ping_every = watchdog_seconds / 2 if watchdog_seconds else 0.0
        self._clock = clock
        self._last_ping: float | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd's variables describe (``NOTIFY_SOCKET``, ``WATCHDOG_USEC``)."""
        env = os.environ if environ is None else environ
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        for_us = not pid or pid == str(os.getpid())
        seconds = int(usec) / 1e6 if usec.isdigit() and for_us else None
        return cls(env.get("NOTIFY_SOCKET") or None, seconds)

    @property
    def active(self) -> bool:
        """True when running under systemd with a notification socket."""
        return self.address is not None

    def ready(self, status: str = "") -> None:
        """Tell systemd that start-up is done (``Type=notify``), with an optional status line."""
        self.send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def ping(self) -> None:
        """Keep the watchdog from firing (rate-limited to every half watchdog period)."""
        if self.watchdog_seconds is None:
            return
        now = self._clock()
        if self._last_ping is not None and now - self._last_ping < self.ping_every:
            return
        self._last_ping = now
        self.send("WATCHDOG=1")

    def stopping(self) -> None:
        """Tell systemd that the service is shutting down."""
        self.send("STOPPING=1")

    def send(self, message: str) -> bool:
        """Send one datagram; False (never an exception) when there is no socket or it fails."""
        if self.address is None:
            return False
        address = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(message.encode(), address)
        except OSError:
            return False
        return True
