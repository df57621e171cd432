"""The router: each job type to the one handler registered for it."""

from __future__ import annotations

import pytest

from skincare_core.jobs.errors import PermanentJobError, UnknownJobType
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.router import Handler, Router

pytestmark = pytest.mark.anyio


class Calls:
    """A handler that keeps the jobs it was given."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    async def __call__(self, job: Job) -> None:
        self.jobs.append(job)


async def test_a_job_goes_to_the_handler_of_its_type_only() -> None:
    router, pay, mail = Router(), Calls(), Calls()
    router.register("pay", pay)
    router.register("mail", mail)
    job = new_job("pay", order_id="1")
    await router.dispatch(job)
    assert (pay.jobs, mail.jobs, router.job_types) == ([job], [], frozenset({"pay", "mail"}))


def test_a_type_registered_twice_is_refused() -> None:
    router = Router()
    router.register("pay", Calls())
    with pytest.raises(ValueError, match="already registered"):
        router.register("pay", Calls())


async def test_an_unknown_type_is_a_permanent_error() -> None:
    with pytest.raises(UnknownJobType, match="'nobody'") as caught:
        await Router().dispatch(new_job("nobody"))
    assert isinstance(caught.value, PermanentJobError)
    assert caught.value.job_type == "nobody"


async def test_wrap_decorates_the_registered_handler() -> None:
    router, calls, seen = Router(), Calls(), []

    def decorate(handler: Handler) -> Handler:
        async def wrapped(job: Job) -> None:
            seen.append(job.type)
            await handler(job)

        return wrapped

    router.register("pay", calls)
    router.wrap("pay", decorate)
    await router.dispatch(job := new_job("pay"))
    assert (seen, calls.jobs) == (["pay"], [job])
    with pytest.raises(KeyError):
        router.wrap("other", decorate)
