"""E-mail delivery failures, split by what the worker should do with the job."""

from __future__ import annotations

from skincare_core.jobs.errors import PermanentJobError


class EmailTemporarilyUnavailable(Exception):
    """The provider could not take the message now (4xx, timeout, refused connection): retry."""


class EmailRejected(PermanentJobError):
    """The provider refused the message for good (5xx on the recipient or the content)."""
