"""Start-up shared by every process: settings or a one-line error and exit code 2, then logging."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TypeVar

from skincare_services.logs import Service, configure_logging
from skincare_services.settings import Settings, SettingsError, load_settings

T = TypeVar("T")


def settings_or_exit(service: Service = "worker") -> Settings:
    """Settings from the environment, then logging for `service`; a bad value exits 2.

    The default suits a team's own worker entry point (`docs/guides/job-types.md`).
    """
    settings = loaded_or_exit(load_settings)
    configure_logging(settings.log_level, service=service)
    return settings


def loaded_or_exit(load: Callable[[Mapping[str, str]], T]) -> T:
    """`load(os.environ)`; on a missing or bad value print one line and exit 2."""
    try:
        return load(os.environ)
    except SettingsError as exc:
        print(f"skincare: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
