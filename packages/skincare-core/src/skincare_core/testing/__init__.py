"""In-memory adapters and fakes for tests, importable by any team, split like the package.

- `skincare_core.testing.jobs`: `InMemoryQueue` and the queue contract suite
  (`skincare_core.testing.jobs.contract`, which needs pytest).
- `skincare_core.testing.shop`: the in-memory shop database, e-mail and invoice fakes, a clock.
"""
