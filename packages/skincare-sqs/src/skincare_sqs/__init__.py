"""Amazon SQS adapter: queue, dead-letter queue, redrive and provisioning; `sqs_backend`."""

from skincare_sqs.backend import sqs_backend
from skincare_sqs.errors import SqsUnavailable
from skincare_sqs.provisioning import QueueUrls, ensure_queues
from skincare_sqs.queue import SqsQueue

__all__ = ["QueueUrls", "SqsQueue", "SqsUnavailable", "ensure_queues", "sqs_backend"]
