"""The shared server fixtures start real servers that answer."""

import boto3
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.anyio


async def test_embedded_postgres_answers(postgres_url: str) -> None:
    engine = create_async_engine(postgres_url)
    async with engine.connect() as conn:
        assert (await conn.execute(sa.text("select 1"))).scalar() == 1
    await engine.dispose()


def test_moto_serves_sqs_over_http(moto_endpoint: str) -> None:
    client = boto3.client("sqs", endpoint_url=moto_endpoint)
    url = client.create_queue(QueueName="smoke")["QueueUrl"]
    assert url.endswith("/smoke")
