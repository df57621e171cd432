"""`skincare-api`: the HTTP API under uvicorn; SIGTERM stops accepting and drains requests."""

from __future__ import annotations

import uvicorn

from skincare_services.compose import api_app
from skincare_services.startup import settings_or_exit


def main() -> None:
    """Console entry point."""
    settings = settings_or_exit("api")
    config = uvicorn.Config(
        api_app(settings=settings),
        host=settings.api_host,
        port=settings.api_port,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
