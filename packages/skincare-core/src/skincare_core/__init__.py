"""skincare_core: the pure domain, ports and job engine of the skincare shop.

Adapters (Postgres, SQS, HTTP, e-mail, invoices) live in their own packages and depend on
this one; this package imports none of them.
"""

from skincare_core.backoff import backoff_delay, full_jitter_delay
from skincare_core.codec import MAX_JOB_BYTES, decode_job, encode_job
from skincare_core.errors import (
    AlreadyNotified,
    CartEmpty,
    DuplicateIdempotencyKey,
    InvalidJob,
    JobTooLarge,
    OrderNotFound,
    OutOfStock,
    PaymentAmountMismatch,
    PaymentNotFound,
    PermanentJobError,
    ProductNotFound,
    RetryLater,
    UnknownJobType,
)
from skincare_core.jobs import (
    GENERATE_INVOICE_PDF,
    PROCESS_PAYMENT,
    SEND_CONFIRMATION_EMAIL,
    SEND_PAYMENT_RECEIVED_EMAIL,
    Job,
    Message,
    new_job,
)

__all__ = [
    "GENERATE_INVOICE_PDF",
    "MAX_JOB_BYTES",
    "PROCESS_PAYMENT",
    "SEND_CONFIRMATION_EMAIL",
    "SEND_PAYMENT_RECEIVED_EMAIL",
    "AlreadyNotified",
    "CartEmpty",
    "DuplicateIdempotencyKey",
    "InvalidJob",
    "Job",
    "JobTooLarge",
    "Message",
    "OrderNotFound",
    "OutOfStock",
    "PaymentAmountMismatch",
    "PaymentNotFound",
    "PermanentJobError",
    "ProductNotFound",
    "RetryLater",
    "UnknownJobType",
    "backoff_delay",
    "decode_job",
    "encode_job",
    "full_jitter_delay",
    "new_job",
]
