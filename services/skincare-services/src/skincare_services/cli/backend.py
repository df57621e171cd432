"""Running one command against the configured queue backend; an outage is one line, exit 3."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, TypeVar

from skincare_services.cli.errors import UNAVAILABLE, CliError

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend
    from skincare_services.settings import Settings

T = TypeVar("T")


def run_on_backend(action: Callable[[Backend], Awaitable[T]], *, queues: Iterable[str] = ()) -> T:
    """Enter the backend the settings name, serving the named `queues` (none: the dead letters
    and stats cover every queue), run `action` on it, and close it again."""
    # Imported here, not at the top, so `skincare --help` loads none of the adapters.
    import anyio

    from skincare_core.jobs.errors import Unavailable
    from skincare_services.startup import settings_or_exit

    settings = settings_or_exit("cli")
    try:
        return anyio.run(_run, settings, action, tuple(queues))
    except Unavailable as exc:
        raise CliError(str(exc), UNAVAILABLE) from None


async def _run(
    settings: Settings, action: Callable[[Backend], Awaitable[T]], queues: tuple[str, ...]
) -> T:
    from skincare_postgres import PostgresNotifier
    from skincare_services.backends import database_engine, job_backend

    async with AsyncExitStack() as stack:
        engine = await stack.enter_async_context(database_engine(settings=settings))
        notifier = PostgresNotifier(engine)
        backend = await stack.enter_async_context(
            job_backend(settings=settings, engine=engine, queues=queues, notifier=notifier)
        )
        result = await action(backend)
        # What the command enqueued wakes idle workers before the process exits.
        await notifier.idle()
        return result
