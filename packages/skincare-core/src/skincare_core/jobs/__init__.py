"""The job engine: what any team imports to run its own job types on our queues.

A job type is declared once as a `JobDefinition` (its attrs class of arguments, handler and
options; `Definitions` gathers a team's for its worker). A `Job` (id, type, JSON payload) is
encoded by `codec`, enqueued on a named `Queue` (now, after
a delay, or once per unique key; or through an `Outbox` in a business transaction, routed by
`QueueRoutes` and forwarded as an `Envelope` by `OutboxRelay`), and run by a `Worker` per named
queue that routes it by type (`Router`) and settles it: ack, retry with backoff, or dead-letter.
"""

from skincare_core.jobs.arguments import legacy_digits
from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.codec import MAX_JOB_BYTES, decode_job, encode_job
from skincare_core.jobs.definitions import Definition, Definitions, JobDefinition, current_job
from skincare_core.jobs.envelope import Envelope, OutboxWriter, RoutedOutbox, enqueue
from skincare_core.jobs.errors import (
    InvalidJob,
    JobTooLarge,
    PermanentJobError,
    PriorityUnsupported,
    RetryLater,
    Snooze,
    Unavailable,
    UnknownJobType,
)
from skincare_core.jobs.history import (
    Attempt,
    HistoryCleaner,
    HistoryQuery,
    InvalidHistoryQuery,
    JobHistory,
    JobRecord,
    JobState,
    Retention,
)
from skincare_core.jobs.job import Job, JsonValue, Message, Payload, new_job, new_job_id
from skincare_core.jobs.metrics import JobMetrics, NoMetrics, Outcome
from skincare_core.jobs.outcomes import JobOutcomes, OutcomeCounts
from skincare_core.jobs.ports import (
    Burial,
    DeadLetter,
    DeadLetters,
    JobSink,
    Outbox,
    OutboxStorage,
    Queue,
    QueueCounts,
    QueueStats,
    RateLimiter,
    Retry,
    ScheduleStore,
    Settlement,
)
from skincare_core.jobs.priority import DEFAULT_PRIORITY, LEAST_URGENT, MOST_URGENT
from skincare_core.jobs.rate_limit import RateLimit, Throttle, throttled
from skincare_core.jobs.relay import OutboxRelay
from skincare_core.jobs.retry import RetryPolicies, RetryPolicy, backoff_delay, full_jitter_delay
from skincare_core.jobs.router import Handler, Router
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes
from skincare_core.jobs.schedule import Schedule
from skincare_core.jobs.scheduler import Scheduler, Schedules
from skincare_core.jobs.tracing import JobTracer, NoTracer
from skincare_core.jobs.worker import Worker

__all__ = [
    "DEFAULT_PRIORITY",
    "DEFAULT_QUEUE",
    "LEAST_URGENT",
    "MAX_JOB_BYTES",
    "MOST_URGENT",
    "Attempt",
    "Backend",
    "Burial",
    "ConcurrencyCaps",
    "DeadLetter",
    "DeadLetters",
    "Definition",
    "Definitions",
    "Envelope",
    "Handler",
    "HistoryCleaner",
    "HistoryQuery",
    "InvalidHistoryQuery",
    "InvalidJob",
    "Job",
    "JobDefinition",
    "JobHistory",
    "JobMetrics",
    "JobOutcomes",
    "JobRecord",
    "JobSink",
    "JobState",
    "JobTooLarge",
    "JobTracer",
    "JsonValue",
    "Message",
    "NoMetrics",
    "NoTracer",
    "Outbox",
    "OutboxRelay",
    "OutboxStorage",
    "OutboxWriter",
    "Outcome",
    "OutcomeCounts",
    "Payload",
    "PermanentJobError",
    "PriorityUnsupported",
    "Queue",
    "QueueCounts",
    "QueueRoutes",
    "QueueStats",
    "RateLimit",
    "RateLimiter",
    "Retention",
    "Retry",
    "RetryLater",
    "RetryPolicies",
    "RetryPolicy",
    "RoutedOutbox",
    "Router",
    "Schedule",
    "ScheduleStore",
    "Scheduler",
    "Schedules",
    "Settlement",
    "Snooze",
    "Throttle",
    "Unavailable",
    "UnknownJobType",
    "Worker",
    "backoff_delay",
    "current_job",
    "decode_job",
    "encode_job",
    "enqueue",
    "full_jitter_delay",
    "legacy_digits",
    "new_job",
    "new_job_id",
    "throttled",
]
