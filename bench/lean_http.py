"""A lean HTTP/1.1 keep-alive client for load generation, one connection per simulated user.

A general client's CPU per request, with many clients in one event loop, queues up and is
reported as server latency; this client does only what the load needs.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from attrs import frozen


@frozen
class Response:
    """Status, headers (lower-case names) and body of one response."""

    status: int
    headers: dict[str, str]
    body: bytes


class LeanConnection:
    """One keep-alive connection to 127.0.0.1:port; requests on it run one after another."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def open(cls, port: int) -> LeanConnection:
        """Connect with TCP_NODELAY, so small requests are not held back by Nagle's algorithm."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: Any = None
    ) -> Response:
        """Send one request (body as JSON when given) and read the whole response."""
        payload = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(payload)}")
        self._writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
        return await self._read()

    async def _read(self) -> Response:
        head = (await self._reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        fields = dict(line.split(":", 1) for line in head[1:] if line)
        headers = {name.strip().lower(): value.strip() for name, value in fields.items()}
        length = int(headers.get("content-length", "0"))
        return Response(status, headers, await self._reader.readexactly(length))

    async def close(self) -> None:
        """Close the connection."""
        self._writer.close()
        await self._writer.wait_closed()
