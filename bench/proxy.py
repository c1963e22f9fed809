"""One port in front of several bot replicas, as a Kubernetes Service with its endpoints (or an
Ingress) puts them: each new connection goes to the next replica that is ready, in turn.

A backend may name its readiness URL (`/readyz`): it is asked every `every` seconds, and a
backend that does not answer 200 gets no new connection — as the endpoints controller takes a
pod that is not ready, or is terminating, out of the Service. A connection a backend refuses is
tried on the next ready one, as ingress-nginx does (`proxy_next_upstream error`); once one is
made, bytes are copied both ways until either side closes. Standard library only.

`python -m bench.proxy --port PORT HOST:PORT...` runs one on its own (the ack benchmark: its
CPU is then not the benchmark's).
"""

from __future__ import annotations

import argparse
import itertools
import signal
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from types import FrameType

CONNECT_TIMEOUT = 2.0
CHUNK = 65536


@dataclass(eq=False)
class Backend:
    host: str
    port: int
    ready_url: str | None = None  # None: always ready
    ready: bool = field(default=False)
    connections: int = 0  # connections sent to it

    def __post_init__(self) -> None:
        self.ready = self.ready_url is None


class RoundRobinProxy:
    def __init__(self, backends: list[Backend], port: int = 0, every: float = 0.05) -> None:
        self.backends = list(backends)
        self.every = every
        self.failed = 0  # connections no ready backend took
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", port), backlog=1024)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._open: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []

    def start(self) -> RoundRobinProxy:
        self._poll()
        for target, name in ((self._accept, "proxy-accept"), (self._watch, "proxy-ready")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def add(self, backend: Backend) -> None:
        with self._lock:
            self.backends.append(backend)

    def remove(self, backend: Backend) -> None:
        with self._lock:
            self.backends.remove(backend)

    def stop(self) -> None:
        self._stop.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close does not)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for sock in list(self._open):
                _close(sock)
        for thread in self._threads:
            thread.join(10)

    # ---- readiness -------------------------------------------------------------------------

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            self._poll()

    def _poll(self) -> None:
        with self._lock:
            backends = list(self.backends)
        for backend in backends:
            if backend.ready_url is not None:
                backend.ready = answers_200(backend.ready_url)

    def _ready(self) -> list[Backend]:
        with self._lock:
            ready = [b for b in self.backends if b.ready]
        if not ready:
            return []
        start = next(self._turn) % len(ready)
        return ready[start:] + ready[:start]

    # ---- connections -----------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed: stopping
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            thread.start()
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _serve(self, client: socket.socket) -> None:
        upstream = self._connect()
        if upstream is None:
            with self._lock:
                self.failed += 1
            _close(client)
            return
        with self._lock:
            self._open.update((client, upstream))
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        with self._lock:
            self._open.difference_update((client, upstream))
        _close(client)
        _close(upstream)

    def _connect(self) -> socket.socket | None:
        for backend in self._ready():
            try:
                upstream = socket.create_connection((backend.host, backend.port), CONNECT_TIMEOUT)
            except OSError:
                continue  # refused (stopped listening): the next one
            with self._lock:
                backend.connections += 1
            return upstream
        return None


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def answers_200(url: str) -> bool:
    """Whether `url` answers 200 within a second (a readiness probe's look)."""
    try:
        with urllib.request.urlopen(url, timeout=1) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("backends", nargs="+", help="HOST:PORT")
    args = parser.parse_args()
    backends = [Backend(h, int(p)) for h, _, p in (b.rpartition(":") for b in args.backends)]
    proxy = RoundRobinProxy(backends, args.port).start()
    done = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    done.wait()
    proxy.stop()


if __name__ == "__main__":
    main()
