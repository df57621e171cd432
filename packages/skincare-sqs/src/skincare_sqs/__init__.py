"""Amazon SQS adapter: a queue and dead-letter queue per named queue, redrive, provisioning, and
the job ledger port its unique keys, cancels and long delays rest on; `sqs_backend`.

Modules: `client` (the boto3 calls, SqsUnavailable, sending jobs), `wire` (a job's attributes
and a dead letter's stamp on a message), `queue` (SqsQueue: receive, settle, leases),
`dead_letters` (moving to the DLQ, the operator's view of the DLQs), `ledger` (the JobLedger
port, enqueueing through it, the relay's outbox and the sink), `provisioning`, `stats` and
`backend`.
"""

from skincare_sqs.backend import sqs_backend
from skincare_sqs.client import MAX_DELAY, SqsUnavailable
from skincare_sqs.ledger import JobLedger
from skincare_sqs.provisioning import QueueUrls, ensure_queue, ensure_queues, queue_urls
from skincare_sqs.queue import SqsQueue

__all__ = [
    "MAX_DELAY",
    "JobLedger",
    "QueueUrls",
    "SqsQueue",
    "SqsUnavailable",
    "ensure_queue",
    "ensure_queues",
    "queue_urls",
    "sqs_backend",
]
