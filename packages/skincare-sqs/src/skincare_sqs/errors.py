"""Errors of the SQS adapter, named for what happened."""

from __future__ import annotations

from skincare_core.jobs.errors import Unavailable


class SqsUnavailable(Unavailable):
    """SQS refused or could not be reached, after botocore's own retries."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"SQS {operation} failed: {reason}")
        self.operation = operation
        self.reason = reason
