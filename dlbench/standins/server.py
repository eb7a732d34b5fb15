"""What every stand-in shares: an HTTP server on a background thread, and a fault schedule."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Generic, TypeVar

F = TypeVar("F")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) refuses bursts of concurrent clients


class LocalServer:
    """A stand-in serving on 127.0.0.1 (an ephemeral port unless given); as a context
    manager it serves on a background thread: ``with Server(...) as server: server.url``."""

    thread_name = "standin"

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", port: int = 0):
        self._httpd = _Server((host, port), handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self.close()

    def close(self) -> None:
        """Release what the stand-in holds beside its socket (nothing by default)."""

    def serve_until_interrupted(self) -> None:
        """Serve in the foreground until Ctrl-C (the command lines)."""
        try:
            self._httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._httpd.server_close()
            self.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FaultSchedule(Generic[F]):
    """Canned failures served in place of real answers, so tests prove clients survive them:
    by request number, or queued for the next requests in turn. Safe across server threads."""

    def __init__(self, numbered: Mapping[int, F] | None = None, queued: Iterable[F] = ()):
        self._numbered = dict(numbered or {})
        self._queued: deque[F] = deque(queued)
        self._lock = threading.Lock()

    def add_next(self, *faults: F) -> None:
        with self._lock:
            self._queued.extend(faults)

    def take(self, number: int | None = None) -> F | None:
        """The fault for request ``number``, else the next queued one, else None."""
        with self._lock:
            if number in self._numbered:
                return self._numbered[number]
            return self._queued.popleft() if self._queued else None
