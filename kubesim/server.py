"""HTTPS front of a cluster: a threading HTTP/1.1 server with a real listen backlog."""

from __future__ import annotations

import json
import queue
import socket
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from kubesim.entries import Watcher
from kubesim.http_messages import Request, Response, WatchStream
from kubesim.request_log import RequestRecord
from kubesim.store import Store

BOOKMARK_SECONDS = 1.0  # a watch asked for bookmarks gets one after this long without events


class Backend(Protocol):
    """What the HTTP server serves: a cluster's API, and its request log."""

    name: str

    @property
    def store(self) -> Store: ...

    def serve(self, req: Request) -> Response: ...

    def record(
        self, req: Request, status: int, bytes_out: int, seconds: float
    ) -> RequestRecord: ...

    def finish_record(self, entry: RequestRecord, bytes_out: int, seconds: float) -> None: ...


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], cluster: Backend, context: ssl.SSLContext) -> None:
        self.cluster = cluster
        self.tls = context
        self.connections: set[socket.socket] = set()
        self.threads: set[threading.Thread] = set()
        self.conn_lock = threading.Lock()
        self.closing = False
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            daemon=True,
            name=f"kubesim-{self.cluster.name}-conn",
        )
        with self.conn_lock:
            self.threads.add(thread)
        thread.start()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.conn_lock:
                self.threads.discard(threading.current_thread())

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self.conn_lock:
            if self.closing:
                request.close()
                return
            self.connections.add(request)
        try:
            request.settimeout(30)
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self.tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            with self.conn_lock:
                self.connections.discard(request)
            return
        with self.conn_lock:
            self.connections.discard(request)
            self.connections.add(tls)
            if self.closing:
                tls.close()
                self.connections.discard(tls)
                return
        try:
            _Handler(tls, client_address, self)
        finally:
            with self.conn_lock:
                self.connections.discard(tls)
            try:
                tls.close()
            except OSError:
                pass

    def accept_loop(self) -> None:
        """Accept until the listening socket is shut down (no polling)."""
        while True:
            try:
                request, client_address = self.socket.accept()
            except OSError:
                return
            self.process_request(request, client_address)

    def stop_accepting(self) -> None:
        try:
            self.socket.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        except OSError:
            pass
        self.socket.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients going away mid-answer are normal here

    def drop_connections(self) -> None:
        """Stop listening and cut every open connection (keep-alive and watches)."""
        with self.conn_lock:
            self.closing = True
            conns = list(self.connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def join_threads(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        with self.conn_lock:
            threads = list(self.threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _serve(self) -> None:
        cluster = self.server.cluster
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = Request(self.command, url.path, query, headers, body)
        started = time.monotonic()
        resp = cluster.serve(req)
        if resp.stream is None:
            # logged before answering: a client that has its answer finds it in the log
            cluster.record(req, resp.status, len(resp.body), time.monotonic() - started)
            self._send(resp)
        else:
            # logged when it starts, so a client that saw events finds the watch in the log
            entry = cluster.record(req, resp.status, 0, 0.0)
            sent = self._stream(resp.stream)
            cluster.finish_record(entry, sent, time.monotonic() - started)

    def _send(self, resp: Response) -> int:
        self.send_response(resp.status)
        headers = {"Content-Type": "application/json", "Cache-Control": "no-cache, private"}
        headers.update(resp.headers)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        try:
            self.wfile.write(resp.body)
        except OSError:
            self.close_connection = True
        return len(resp.body)

    def _stream(self, stream: WatchStream) -> int:
        """A watch: chunked newline-delimited JSON events until timeout or shutdown. Asked for
        bookmarks, it sends one after each `BOOKMARK_SECONDS` without an event, and one as the
        timeout ends it (the real server sends them about a minute apart, and in the last
        seconds before `timeoutSeconds`)."""
        cluster = self.server.cluster
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        deadline = time.monotonic() + stream.timeout
        write: Callable[[bytes], None] = self._chunk
        watcher = stream.watcher
        try:
            if stream.error is not None:  # one ERROR event, then the stream ends properly
                sent += self._event(
                    write, b'{"type":"ERROR","object":' + _dumps(stream.error) + b"}"
                )
            while stream.error is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    sent += self._bookmark(write, watcher)
                    break
                wait = min(remaining, BOOKMARK_SECONDS) if watcher.bookmarks else remaining
                try:
                    item = watcher.queue.get(timeout=wait)
                except queue.Empty:
                    sent += self._bookmark(write, watcher)
                    continue
                if item is None:
                    break
                kind, entry = item
                line = b'{"type":"' + kind.encode() + b'","object":' + entry.raw() + b"}"
                sent += self._event(write, line)
            write(b"")
        except OSError:
            self.close_connection = True
        finally:
            cluster.store.unwatch(stream.watcher)
        return sent

    def _bookmark(self, write: Callable[[bytes], None], watcher: Watcher) -> int:
        """A BOOKMARK at the store's revision, if asked for and no event waits to be sent
        (events are queued under the store's lock: one queued later is newer)."""
        if not watcher.bookmarks:
            return 0
        store = self.server.cluster.store
        with store.lock:
            if not watcher.queue.empty():
                return 0
            revision = store.rv
        return self._event(write, watcher.bookmark(revision))

    def _event(self, write: Callable[[bytes], None], line: bytes) -> int:
        write(line + b"\n")
        return len(line) + 1

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class ApiServer:
    """Listens on 127.0.0.1:port for one cluster; can stop and restart on the same port."""

    def __init__(self, cluster: Backend, context: ssl.SSLContext, port: int = 0) -> None:
        self.cluster = cluster
        self.context = context
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def listening(self) -> bool:
        return self._server is not None

    def bind(self) -> int:
        """Bind the port (so the URL is known before ``start``)."""
        if self._server is None:
            self._server = _Server(("127.0.0.1", self.port), self.cluster, self.context)
            self.port = self._server.server_address[1]
        return self.port

    def start(self) -> None:
        self.bind()
        assert self._server is not None
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.accept_loop,
                daemon=True,
                name=f"kubesim-{self.cluster.name}-accept",
            )
            self._thread.start()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server, self._thread = None, None
        if server is None:
            return
        server.stop_accepting()
        if thread is not None:
            thread.join(5)
        server.drop_connections()
        server.join_threads()
