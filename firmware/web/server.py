"""The live page's server: aiohttp in a thread of its own, read-only, bounded, never in the way.

The referee loop hands each new state to :meth:`WebServer.publish`, which only schedules it on the
server's event loop (``call_soon_threadsafe``) and returns. There the :class:`Hub` encodes it once
and puts it in every live client's queue (at most :attr:`Limits.queue` messages); a client whose
queue is full, or who takes longer than :attr:`Limits.write_timeout` to accept a message, is
dropped (its connection is closed; a browser's ``EventSource`` reconnects by itself). At most
:attr:`Limits.clients` event streams are served at once (503 beyond). Only GET and HEAD exist;
every answer carries a strict Content-Security-Policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from engine import FormatError, Move, RefereeError

from ..diagram import draw
from ..export import FORMATS, MEDIA, export
from ..records import replayed
from .archive import Archive
from .live import LiveFeed

DEFAULT_PORT = 8080
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}
#: The page's files (name -> MIME type), served from the package; nothing else is.
STATIC = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "style.css": "text/css",
}


@dataclass(frozen=True)
class Limits:
    """Bounds on what clients may cost: event streams at once, messages queued per stream,
    seconds a stream may take to accept one, seconds between keep-alive comments, the kernel's
    send buffer of a stream (bytes), and the camera view's scale and refresh period."""

    clients: int = 32
    queue: int = 8
    write_timeout: float = 5.0
    keepalive: float = 15.0
    send_buffer: int = 1 << 16
    camera_px_per_mm: float = 1.5
    camera_every: float = 1.0


@dataclass(eq=False)
class Client:
    """One event stream: its queue and its connection."""

    queue: asyncio.Queue[bytes]
    transport: asyncio.BaseTransport | None
    dropped: bool = False


@dataclass
class Hub:
    """The latest state and the event streams it goes to (used in the server's thread only)."""

    state: bytes = b"{}"
    message: bytes = b""
    record: dict[str, Any] | None = None
    clients: set[Client] = field(default_factory=set)
    dropped: int = 0

    def publish(self, state: dict[str, Any], record: dict[str, Any] | None) -> None:
        """Encode ``state`` once and queue it for every client; drop those who lag behind."""
        self.state = json.dumps(state, separators=(",", ":")).encode()
        self.message = b"event: state\ndata: " + self.state + b"\n\n"
        self.record = record
        for client in list(self.clients):
            try:
                client.queue.put_nowait(self.message)
            except asyncio.QueueFull:
                self.drop(client)

    def drop(self, client: Client) -> None:
        """Forget a client and close its connection."""
        if client in self.clients:
            self.clients.discard(client)
            self.dropped += 1
        client.dropped = True
        if client.transport is not None:
            client.transport.abort()


def parse_listen(text: str, default_host: str) -> tuple[str, int]:
    """``"8080"`` -> (default_host, 8080); ``"0.0.0.0:80"`` -> ("0.0.0.0", 80)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else default_host
    try:
        number = int(port)
    except ValueError:
        raise FormatError(f"--web expects [HOST:]PORT, not {text!r}") from None
    if not 0 <= number <= 65535:
        raise FormatError(f"port {number} is not 0..65535")
    return host or default_host, number


def start_server(
    listen: str, default_host: str, records_dir: str | Path | Sequence[str | Path]
) -> WebServer:
    """Start the page's server for ``--web [HOST:]PORT``; :class:`OSError` or
    :class:`~engine.FormatError` with a one-line reason when it cannot."""
    host, port = parse_listen(listen, default_host)
    try:
        return WebServer(host, port, records_dir=records_dir).start()
    except OSError as exc:
        raise OSError(f"cannot serve the page on {host}:{port}: {exc.strerror or exc}") from None


def lan_address() -> str:
    """This machine's address on its local network (a private address), else ``127.0.0.1``.

    A UDP socket "connected" to a documentation address picks the interface of the default route;
    no packet is sent. A public address is never returned: the page is not for the internet."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"
    ip = ipaddress.ip_address(address)
    return address if ip.is_private or ip.is_loopback else "127.0.0.1"


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    """Only GET and HEAD; the security headers on every answer, errors included."""
    if request.method not in ("GET", "HEAD"):
        response: web.StreamResponse = web.Response(
            status=405, text="read-only\n", headers={"Allow": "GET, HEAD"}
        )
    else:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            response = web.Response(status=exc.status, text=f"{exc.reason}\n")
    if not response.prepared:
        response.headers.update(HEADERS)
    return response


class WebServer:
    """The page's server on ``host:port`` for one loop's :class:`LiveFeed` (:attr:`feed`) and
    the records folder(s) of the finished games."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        records_dir: str | Path | Sequence[str | Path] = "out/records",
        limits: Limits | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.limits = limits or Limits()
        self.hub = Hub()
        folders = [records_dir] if isinstance(records_dir, str | Path) else list(records_dir)
        self.archive = Archive(folders)
        self.feed = LiveFeed(self.publish)
        self.pages = {name: _static(name) for name in STATIC}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._camera: tuple[int, bytes] | None = None
        self._camera_at = -1e9
        self._error: BaseException | None = None

    # ----------------------------------------------------------------- the loop's side
    def publish(self, state: dict[str, Any], record: dict[str, Any] | None = None) -> None:
        """Hand a new state over to the server's thread; returns at once."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the server is stopping
                loop.call_soon_threadsafe(self.hub.publish, state, record)

    # ----------------------------------------------------------------- life cycle
    @property
    def url(self) -> str:
        """The page's address (on every interface: the one on the LAN, for the QR code)."""
        host = lan_address() if self.host in ("", "0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def start(self) -> WebServer:
        """Start serving in a daemon thread; :class:`OSError` if the address cannot be bound."""
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(ready,), name="referee-web", daemon=True
        )
        self._thread.start()
        ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Close every connection and end the thread."""
        loop = self._loop
        if loop is None or self._thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._open())
        except OSError as exc:
            self._error = exc
            ready.set()
            loop.close()
            return
        self._loop = loop
        ready.set()
        try:
            loop.run_forever()
        finally:
            for client in list(self.hub.clients):
                self.hub.drop(client)
            assert self._runner is not None
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    async def _open(self) -> None:
        app = web.Application(middlewares=[_guard], client_max_size=1024)
        app.router.add_get("/", self._index)
        app.router.add_get("/static/{name}", self._file)
        app.router.add_get("/api/state", self._state)
        app.router.add_get("/api/events", self._events)
        app.router.add_get("/api/camera.jpg", self._camera_jpeg)
        app.router.add_get("/api/export.{fmt}", self._export_live)
        app.router.add_get("/api/games", self._games)
        app.router.add_get("/api/games/{id}", self._game)
        app.router.add_get("/api/games/{id}/diagram.svg", self._game_diagram)
        app.router.add_get("/api/games/{id}/export.{fmt}", self._game_export)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        server = site._server
        if server is not None and self.port == 0:
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    # ----------------------------------------------------------------- the page
    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self.pages["index.html"], content_type="text/html", charset="utf-8"
        )

    async def _file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=self.pages[name], content_type=STATIC[name], charset="utf-8")

    async def _state(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self.hub.state,
            content_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    async def _events(self, request: web.Request) -> web.StreamResponse:
        hub = self.hub
        if len(hub.clients) >= self.limits.clients:
            raise web.HTTPServiceUnavailable(reason="too many viewers")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store", **HEADERS}
        )
        sock = request.transport.get_extra_info("socket") if request.transport else None
        if sock is not None:  # what a stalled client can hold in the kernel is bounded too
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.limits.send_buffer)
        await response.prepare(request)
        client = Client(asyncio.Queue(self.limits.queue), request.transport)
        hub.clients.add(client)
        try:
            await self._send(response, b"retry: 2000\n\n" + hub.message)
            while not client.dropped:
                try:
                    message = await asyncio.wait_for(client.queue.get(), self.limits.keepalive)
                except TimeoutError:
                    message = b": keep-alive\n\n"
                await self._send(response, message)
        except (ConnectionError, TimeoutError, RuntimeError):
            pass
        finally:
            hub.drop(client)
        return response

    async def _send(self, response: web.StreamResponse, message: bytes) -> None:
        await asyncio.wait_for(response.write(message), self.limits.write_timeout)

    async def _camera_jpeg(self, request: web.Request) -> web.Response:
        view = self.feed.camera
        if view is None:
            raise web.HTTPNotFound(reason="no board seen yet")
        loop = asyncio.get_running_loop()
        if self._camera is None or (
            self._camera[0] != view.seq
            and loop.time() - self._camera_at >= self.limits.camera_every
        ):
            self._camera_at = loop.time()
            jpeg = await loop.run_in_executor(None, self._rectified, view)
            self._camera = (view.seq, jpeg)
        return web.Response(
            body=self._camera[1], content_type="image/jpeg", headers={"Cache-Control": "no-store"}
        )

    def _rectified(self, view: Any) -> bytes:
        import cv2

        from vision.locate import rectify

        image = rectify(view.frame, view.pose, self.limits.camera_px_per_mm)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
        return data.tobytes() if ok else b""

    # ----------------------------------------------------------------- records
    async def _export_live(self, request: web.Request) -> web.Response:
        record = self.hub.record
        if record is None:
            raise web.HTTPNotFound(reason="no game yet")
        from engine import game_class

        game = game_class(record["game"]).from_record(record)
        return self._download(game, request.match_info["fmt"], f"live-{game.name}")

    async def _games(self, request: web.Request) -> web.Response:
        listing = await asyncio.get_running_loop().run_in_executor(None, self.archive.listing)
        return web.json_response({"games": listing}, headers={"Cache-Control": "no-store"})

    async def _game(self, request: web.Request) -> web.Response:
        game_id = request.match_info["id"]
        loop = asyncio.get_running_loop()
        details = await loop.run_in_executor(None, self.archive.details, game_id)
        if details is None:
            raise web.HTTPNotFound()
        return web.json_response(details)

    async def _game_diagram(self, request: web.Request) -> web.Response:
        game = self.archive.game(request.match_info["id"])
        if game is None:
            raise web.HTTPNotFound()
        try:
            move = int(request.query.get("move", len(game.history)))
        except ValueError:
            raise web.HTTPBadRequest(reason="move must be a number") from None
        if not 0 <= move <= len(game.history):
            raise web.HTTPBadRequest(reason="no such move")
        action = game.history[move - 1] if move else None
        last = action.cells() if isinstance(action, Move) else ()
        svg = draw(replayed(game, move), last=last).to_svg()
        return web.Response(text=svg, content_type="image/svg+xml")

    async def _game_export(self, request: web.Request) -> web.Response:
        game_id = request.match_info["id"]
        game = self.archive.game(game_id)
        if game is None:
            raise web.HTTPNotFound()
        return self._download(game, request.match_info["fmt"], game_id)

    def _download(self, game: Any, fmt: str, stem: str) -> web.Response:
        if fmt not in FORMATS:
            raise web.HTTPNotFound()
        try:
            text = export(game, fmt)
        except RefereeError as exc:
            raise web.HTTPNotFound(reason=str(exc).split(":")[0]) from None
        suffix, media = MEDIA[fmt]
        return web.Response(
            body=text.encode("utf-8"),
            headers={
                "Content-Type": media,
                "Content-Disposition": f'attachment; filename="{stem}{suffix}"',
            },
        )
