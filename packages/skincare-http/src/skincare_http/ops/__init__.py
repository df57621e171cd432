"""The ops page: a server-rendered operator console over the job engine's OpsService."""

from skincare_http.ops.app import OpsSettings, create_ops_app

__all__ = ["OpsSettings", "create_ops_app"]
