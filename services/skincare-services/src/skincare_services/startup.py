"""Start-up shared by every process: settings or a one-line error and exit code 2, then logging."""

from __future__ import annotations

import os
import sys

from skincare_services.logs import configure_logging
from skincare_services.settings import Settings, SettingsError, load_settings


def settings_or_exit() -> Settings:
    """Settings from the environment; on a bad value print one line and exit 2."""
    try:
        settings = load_settings(os.environ)
    except SettingsError as exc:
        print(f"skincare: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(settings.log_level)
    return settings
