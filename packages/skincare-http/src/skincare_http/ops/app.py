"""The ops app: its own Litestar app on its own port (`skincare ops`), never the public API's."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from attrs import field, frozen
from litestar import Litestar, Router
from litestar.config.csrf import CSRFConfig
from litestar.di import Provide
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.template.config import TemplateConfig

from skincare_core.jobs.ops import OpsService
from skincare_core.shop.ports import Clock
from skincare_core.shop.system_clock import SystemClock
from skincare_http.ops.charts import chart_paths
from skincare_http.ops.operator import OperatorGuard
from skincare_http.ops.page_headers import add_page_headers
from skincare_http.ops.routes import OPERATOR_ROUTES, SIGN_IN_ROUTES
from skincare_http.ops.same_origin import SameOrigin
from skincare_http.ops.sign_in_limit import SignInLimit

TEMPLATES = Path(__file__).parent / "templates"


@frozen
class OpsSettings:
    """Who may sign in (the API's JWT secret and issuer, the ops token) and the CSRF secret."""

    jwt_secret: str = field(repr=False)
    jwt_issuer: str
    ops_token: str | None = field(repr=False)
    csrf_secret: str = field(repr=False)


def create_ops_app(
    *, ops: OpsService, settings: OpsSettings, clock: Clock | None = None
) -> Litestar:
    """The ops page over this service: operator-only, every POST checked for its origin and its
    CSRF token (the cookie is HttpOnly: the token reaches a form only in the page)."""
    guard = OperatorGuard(
        jwt_secret=settings.jwt_secret,
        jwt_issuer=settings.jwt_issuer,
        ops_token=settings.ops_token,
        limit=SignInLimit(clock or SystemClock()),
    )
    pages = Router("/ops", route_handlers=OPERATOR_ROUTES, guards=[guard])
    return Litestar(
        route_handlers=[pages, Router("/ops", route_handlers=SIGN_IN_ROUTES)],
        dependencies={
            "ops": Provide(lambda: ops, use_cache=True, sync_to_thread=False),
            "guard": Provide(lambda: guard, use_cache=True, sync_to_thread=False),
        },
        template_config=TemplateConfig(
            directory=TEMPLATES, engine=JinjaTemplateEngine, engine_callback=_add_filters
        ),
        middleware=[SameOrigin()],
        before_send=[add_page_headers],
        csrf_config=_csrf(settings.csrf_secret),
        openapi_config=None,
        logging_config=None,
    )


def _csrf(secret: str) -> CSRFConfig:
    # HttpOnly: no script reads the token; the page's forms carry it.
    return CSRFConfig(
        secret=secret, cookie_path="/ops", cookie_samesite="strict", cookie_httponly=True
    )


def _add_filters(engine: JinjaTemplateEngine) -> None:
    # `quote`: a value quoted whole for a URL, `/` included, so a job id stays one path segment.
    engine.engine.filters["quote"] = lambda value: quote(str(value), safe="")
    engine.engine.globals["chart_paths"] = chart_paths
