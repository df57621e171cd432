"""Concurrency caps on SQS, counted in the job ledger: which received jobs may start.

A capped start runs as one transaction on a pooled connection, the way a Postgres capped claim
does (`capped_claims.py`):

1. it takes the advisory lock of each cap the queue may meet, in one sorted order (the same
   locks as a Postgres claim, `capped_claims.LOCK`), so the starts that could book one cap take
   turns; the lock is a statement of its own, so the next one sees every start committed
   before it;
2. it drops the received tombstones (acked unrun, they take no slot), notes the received jobs
   that run already under a live lease (SQS delivered them twice: they wait, held back), counts
   each cap's running jobs (the slots whose ledger row still runs under the receipt it started
   with, unexpired) and deletes the slots that no longer count (`ledger_sql.CAP_ROOM`);
3. it books as many jobs as each cap has room for, in the order received, and starts them; one
   whose row is in no state to start (cancelled meanwhile, dead, or back in the outbox) is a
   stray copy, acked unrun.

The jobs left over are held back: their rows stay `sent`, and the SQS queue sends each again,
unrun and without spending an attempt (`skincare_sqs.caps`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from typing import NamedTuple

import psycopg
from psycopg.rows import TupleRow, dict_row, tuple_row

from skincare_core.jobs.caps import CapRoom, ConcurrencyCaps
from skincare_postgres.execution import fetch
from skincare_postgres.jobs import ledger_sql as sql
from skincare_postgres.jobs.capped_claims import LOCK


class CappedStart(NamedTuple):
    """What a capped start did with the received jobs: the `unrun` ones (cancelled, or a stray
    copy of a job that is not in SQS: ack them unrun) and those `held_back` by a full cap or
    running already (not started); every other one runs."""

    unrun: frozenset[str]
    held_back: frozenset[str]


async def start_capped(
    conn: psycopg.AsyncConnection[TupleRow],
    jobs: Sequence[tuple[str, str]],
    *,
    queue: str,
    caps: ConcurrencyCaps,
    lease: timedelta,
) -> CappedStart:
    """Start the received (id, type) jobs of `queue` that `caps` have room for, each slot
    leased for `lease`, inside the caller's transaction on `conn`."""
    locked = {"caps": list(caps.relevant_to(queue))}
    await fetch(conn, LOCK, locked, tuple_row)
    [found] = await fetch(conn, sql.CAP_ROOM, locked | {"ids": [i for i, _ in jobs]}, dict_row)
    cancelled = frozenset(str(job_id) for job_id in found["cancelled"])
    busy = frozenset(str(job_id) for job_id in found["busy"])
    room = CapRoom(caps, Counter(found["running"]))
    waiting = {job_id: job_type for job_id, job_type in jobs if job_id not in cancelled}
    chosen = {i: t for i, t in waiting.items() if i not in busy and room.take(queue, t)}
    started = await _start(conn, chosen, queue=queue, caps=caps, lease=lease) if chosen else set()
    stray = frozenset(chosen) - started
    return CappedStart(cancelled | stray, frozenset(waiting) - frozenset(chosen))


async def _start(
    conn: psycopg.AsyncConnection[TupleRow],
    chosen: dict[str, str],
    *,
    queue: str,
    caps: ConcurrencyCaps,
    lease: timedelta,
) -> set[str]:
    # The ids started: a row in no state to start is left as it is.
    slots = [(cap, i) for i, t in chosen.items() for cap in caps.caps_of(queue, t)]
    params = {
        "ids": list(chosen),
        "types": list(chosen.values()),
        "queue": queue,
        "lease": lease,
        "lease_caps": [cap for cap, _ in slots],
        "lease_ids": [job_id for _, job_id in slots],
    }
    return {str(job_id) for (job_id,) in await fetch(conn, sql.START_CAPPED, params, tuple_row)}
