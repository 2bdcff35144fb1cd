"""The FastAPI application of ``assay serve``: routes, error bodies, ``/healthz`` and ``/metrics``."""

from __future__ import annotations

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.errors import field_path
from assay.serve.auth import require_read
from assay.serve.database import ServeStorageError
from assay.serve.errors import ApiError
from assay.serve.hot import HotRoutes
from assay.serve.limits import RequestLimits
from assay.serve.metrics import Metrics
from assay.serve.responses import error_response
from assay.serve.routes import router
from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState
from assay.version import __version__


def create_app(settings: ServeSettings, state: ServeState | None = None) -> FastAPI:
    """The service on ``settings`` (opening its database unless ``state`` is given); OpenAPI docs at ``/docs``."""
    state = state if state is not None else ServeState(settings)
    app = FastAPI(
        title="assay serve",
        version=__version__,
        description="Online variant selection from pairwise feedback (Elo), with ratings in shared SQL state.",
    )
    app.state.settings = settings
    app.state.serve = state
    metrics = Metrics(state)
    app.include_router(router)
    # Added first, so it runs last: the hot endpoints are answered there, ahead of FastAPI's routing.
    app.add_middleware(HotRoutes, state=state)
    app.add_middleware(_Timed, metrics=metrics)
    # Added last, so it runs first: a request that breaks a limit never reaches authentication or parsing.
    app.add_middleware(RequestLimits, settings=settings)

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = field_path([p for p in first.get("loc", ()) if p != "body"]) or "body"
        error = ApiError("invalid_request", f"{where}: {first.get('msg', 'invalid')}", field=where)
        return JSONResponse(error.body(), status_code=error.status)

    @app.exception_handler(ServeStorageError)
    async def storage(_request: Request, exc: ServeStorageError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        error = _http_error(exc)
        return JSONResponse(error.body(), status_code=error.status)

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)

    @app.get("/healthz")
    def healthz() -> JSONResponse:
        """200 ``{"status": "ok"}`` with the database reachable, 503 ``{"status": "down"}`` otherwise."""
        try:
            state.db.read(lambda conn: conn.exec_driver_sql("SELECT 1").scalar())
        except ServeStorageError:
            return JSONResponse({"status": "down"}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/metrics", dependencies=[Depends(require_read)])
    def prometheus() -> Response:
        """Prometheus text format."""
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app


def _http_error(exc: HTTPException) -> ApiError:
    """Starlette's own refusals (no route, wrong method, a body it could not read) in the API's error shape."""
    if exc.status_code == 404:
        return ApiError("not_found", "no such endpoint (see /docs)")
    if exc.status_code == 405:
        return ApiError("method_not_allowed", "this endpoint does not take that method (see /docs)")
    # FastAPI answers 400 for a body json cannot decode: bytes that are not UTF-8, nesting too deep.
    return ApiError("invalid_request", "body: not a JSON document in UTF-8 that can be read", field="body")


class _Timed:
    """Adapter so the latency middleware can be added with ``app.add_middleware``."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self._call = metrics.middleware(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._call(scope, receive, send)
