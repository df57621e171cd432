"""The worker's own small HTTP endpoint: `/metrics` (prometheus-client's exposition) and
`/healthz` (is every worker loop going round), served on the worker's event loop.

A worker runs no web framework: a request line and a response per connection is all a scraper
and a container HEALTHCHECK need, and serving them on the worker's loop lets the depth
collector await the queue adapters directly.
"""

from __future__ import annotations

import logging

import anyio
from anyio.abc import SocketStream
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from skincare_prometheus.depth import QueueDepthCollector
from skincare_prometheus.job_metrics import PrometheusJobMetrics

logger = logging.getLogger(__name__)
_MAX_REQUEST = 8192
_READ_TIMEOUT = 5.0


class WorkerEndpoint:
    """Answers /metrics and /healthz for one worker process."""

    def __init__(
        self,
        *,
        registry: CollectorRegistry,
        jobs: PrometheusJobMetrics,
        depth: QueueDepthCollector,
        stale_after: float = 60.0,
    ) -> None:
        self._registry = registry
        self._jobs = jobs
        self._depth = depth
        self._stale_after = stale_after

    async def serve(self, *, host: str, port: int, task_status: anyio.abc.TaskStatus[int]) -> None:
        """Listen on host:port (0: any free port, reported through `task_status`) until
        cancelled."""
        listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
        async with listener:
            bound = listener.extra(anyio.abc.SocketAttribute.local_port)
            logger.info("metrics.listening", extra={"host": host, "port": bound})
            task_status.started(bound)
            await listener.serve(self._connection)

    async def respond(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for a GET of `path`."""
        if path == "/metrics":
            await self._depth.refresh()
            return 200, CONTENT_TYPE_LATEST, generate_latest(self._registry)
        if path == "/healthz":
            stale = self._jobs.stale_queues(self._stale_after)
            if stale:
                return 503, "text/plain", f"stale: {','.join(stale)}\n".encode()
            return 200, "text/plain", b"ok\n"
        return 404, "text/plain", b"not found\n"

    async def _connection(self, stream: SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(_READ_TIMEOUT):
                    head = await _read_head(stream)
                method, target, *_ = [*head.split(b" ", 2), b"", b""]
                if method != b"GET":
                    status, kind, body = 405, "text/plain", b"GET only\n"
                else:
                    status, kind, body = await self.respond(target.split(b"?")[0].decode("latin-1"))
                await stream.send(_response(status, kind, body))
            except (OSError, TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError):
                return


async def _read_head(stream: SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and len(data) < _MAX_REQUEST:
        data += await stream.receive()
    return data.split(b"\r\n", 1)[0]


def _response(status: int, kind: str, body: bytes) -> bytes:
    reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Unavailable"}
    head = (
        f"HTTP/1.1 {status} {reason[status]}\r\nContent-Type: {kind}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body
