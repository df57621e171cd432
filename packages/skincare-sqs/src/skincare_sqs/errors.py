"""Errors of the SQS adapter, named for what happened."""

from __future__ import annotations


class SqsUnavailable(Exception):
    """SQS refused or could not be reached, after botocore's own retries."""

    def __init__(self, operation: str, reason: str) -> None:
        super().__init__(f"SQS {operation} failed: {reason}")
        self.operation = operation
        self.reason = reason
