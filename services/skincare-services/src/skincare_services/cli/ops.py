"""`skincare ops`: the operator's web page on its own port, over the configured backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cyclopts import App, Parameter, validators

from skincare_services.cli.backend import run_on_backend

if TYPE_CHECKING:
    from skincare_core.jobs.backend import Backend


def register(app: App) -> None:
    """Add `ops` to the `skincare` app."""
    app.command(ops)


def ops(
    *,
    host: str = "127.0.0.1",
    port: Annotated[int, Parameter(validator=validators.Number(gt=0, lt=65536))] = 8001,
) -> int:
    """Serve the ops page at /ops/ (queue depth, dead letters, redrive, purge) until Ctrl-C.

    Parameters
    ----------
    host
        The address to listen on; keep it private (an internal network or 127.0.0.1).
    port
        The port to listen on, apart from the API's.
    """
    run_on_backend(lambda backend: _serve(backend, host, port))
    return 0


async def _serve(backend: Backend, host: str, port: int) -> None:
    import uvicorn

    from skincare_services.compose import ops_app
    from skincare_services.startup import settings_or_exit

    app = ops_app(settings=settings_or_exit("cli"), backend=backend)
    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False)
    await uvicorn.Server(config).serve()
