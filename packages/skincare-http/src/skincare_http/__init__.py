"""The Litestar HTTP API: checkout, orders, cart, signed payment webhook, health."""

from skincare_http.app import create_app
from skincare_http.auth import issue_token
from skincare_http.config import ApiServices, ApiSettings, Readiness
from skincare_http.problems import ALL_PROBLEM_TYPES, PROBLEM_BASE, ProblemType
from skincare_http.webhook_signature import sign_webhook, verify_signature

__all__ = [
    "ALL_PROBLEM_TYPES",
    "PROBLEM_BASE",
    "ApiServices",
    "ApiSettings",
    "ProblemType",
    "Readiness",
    "create_app",
    "issue_token",
    "sign_webhook",
    "verify_signature",
]
