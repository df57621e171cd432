"""A TCP proxy a test controls: it forwards to an upstream address (TCP, or a Unix socket's
path), and on command cuts, stalls or slows the traffic.

A cut is a server gone: open connections are reset and new ones refused (reset at once) until
`resume()`. Slow delays every forwarded chunk by a fixed time.

A stall is an endpoint that accepts connections and never answers: from `stall()` on, nothing
more is forwarded on any open connection, and connections accepted during the stall are never
forwarded at all. Those connections stay silent after `resume()` too (the requests they carried
are lost, as with a server that hung); only connections opened after `resume()` are forwarded.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

_CHUNK = 65536


class TcpProxy:
    """127.0.0.1:<port> -> upstream, in threads; `stall()`, `resume()`, `close()`."""

    def __init__(self, upstream: tuple[str, int] | str) -> None:
        self._upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._stalled = threading.Event()
        self._cut = threading.Event()
        self._delay = 0.0
        self._generation = 0
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.accepted = 0
        threading.Thread(target=self._accept_loop, daemon=True).start()

    @property
    def address(self) -> str:
        """The proxy's http:// address."""
        return f"http://127.0.0.1:{self.port}"

    def stall(self) -> None:
        """Stop answering: open connections go silent, new ones are accepted and ignored."""
        with self._lock:
            self._generation += 1
            self._stalled.set()

    def resume(self) -> None:
        """Forward connections opened from now on at full speed; the silent ones stay silent."""
        self._stalled.clear()
        self._cut.clear()
        self._delay = 0.0

    def cut(self) -> None:
        """Reset every open connection and every new one until `resume()`."""
        self._cut.set()
        with self._lock:
            self._generation += 1
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _reset(sock)

    def slow(self, delay: float) -> None:
        """Hold every chunk forwarded from now on for `delay` seconds."""
        self._delay = delay

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
            if self._cut.is_set():
                _reset(client)
                continue
            with self._lock:
                self._sockets.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with self._lock:
            stalled, generation = self._stalled.is_set(), self._generation
        if stalled:
            self._pump(client, None, generation)
            return
        try:
            upstream = _connect(self._upstream)
        except OSError:
            client.close()
            return
        with self._lock:
            self._sockets.append(upstream)
        threading.Thread(
            target=self._pump, args=(upstream, client, generation), daemon=True
        ).start()
        self._pump(client, upstream, generation)

    def _pump(self, source: socket.socket, target: socket.socket | None, generation: int) -> None:
        # Reads on after a stall, dropping what it reads, so a client that gives up is noticed.
        try:
            while data := source.recv(_CHUNK):
                if self._delay:
                    time.sleep(self._delay)
                if target is not None and generation == self._generation:
                    target.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            if target is not None:
                _close(target)


def _connect(upstream: tuple[str, int] | str) -> socket.socket:
    if isinstance(upstream, tuple):
        return socket.create_connection(upstream)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(upstream)
    return sock


def _reset(sock: socket.socket) -> None:
    """Close with an RST (linger 0), as a dead server's host answers, not a clean FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    _close(sock)


def _close(sock: socket.socket) -> None:
    # close() alone waits for another thread's recv() on the socket, which may never return:
    # shutdown() ends that recv at once, so the pair's other side is closed too.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
