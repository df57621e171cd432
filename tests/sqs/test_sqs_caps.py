"""SQS has no count of running jobs across processes: caps are refused when the backend opens."""

from __future__ import annotations

from typing import Any

import pytest

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_core.jobs.errors import CapsUnsupported
from skincare_postgres import PostgresJobLedger
from skincare_sqs import sqs_backend

pytestmark = pytest.mark.anyio


async def test_caps_are_refused_on_sqs_with_one_clear_line(
    sqs_client: Any, ledger: PostgresJobLedger
) -> None:
    caps = ConcurrencyCaps(types={"mail": 2})
    with pytest.raises(CapsUnsupported, match="the sqs queue backend cannot enforce"):
        async with sqs_backend(sqs_client, urls={}, ledger=ledger, queues=(), caps=caps):
            pass
