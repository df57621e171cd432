"""The worker's metrics port: what the engine reports as it runs jobs, for an adapter to count.

Core knows no metrics library: the worker calls a `JobMetrics`, and an adapter outside core
(skincare-prometheus) turns the calls into counters, histograms and gauges. Every call is on the
worker's hot path, so an implementation must only add to in-memory values, never do I/O.
"""

from __future__ import annotations

from typing import Literal, Protocol

Outcome = Literal["done", "retried", "dead_lettered", "cancelled"]


class JobMetrics(Protocol):
    """What one worker of one named queue reports; `queue` names that queue in every call."""

    def received(self, queue: str, count: int) -> None:
        """A receive returned `count` jobs (0 too): the worker loop is alive."""

    def receive_failed(self, queue: str) -> None:
        """A receive raised (the queue is unreachable)."""

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        """A handler starts; `pickup_latency` is the seconds since the job was enqueued
        (None when the queue cannot tell)."""

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        """A job settled with `outcome` after running `duration` seconds."""

    def settle_failed(self, queue: str) -> None:
        """A settlement (ack, retry, dead-letter) or lease renewal raised (once per job,
        however often it is then retried)."""


class NoMetrics:
    """The metrics of a worker nobody scrapes: every call does nothing."""

    def received(self, queue: str, count: int) -> None:
        """Nothing."""

    def receive_failed(self, queue: str) -> None:
        """Nothing."""

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        """Nothing."""

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        """Nothing."""

    def settle_failed(self, queue: str) -> None:
        """Nothing."""
