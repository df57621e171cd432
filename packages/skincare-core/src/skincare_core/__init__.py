"""skincare_core: a job engine any team can use, and the skincare shop built on it.

- `skincare_core.jobs`: the engine (jobs, codec, queue ports, worker, retry rules, router,
  backoff, outbox relay). It imports nothing of the shop.
- `skincare_core.shop`: our shop (models, money, its ports, services, handlers, job types).
- `skincare_core.testing`: in-memory adapters, split the same way (`testing.jobs`, `testing.shop`).
- `skincare_core.log_context`: fields (job id, request id, ...) bound to the current task's logs.

Adapters (Postgres, SQS, HTTP, e-mail, invoices) live in their own packages and depend on this
one; this package imports none of them.
"""
