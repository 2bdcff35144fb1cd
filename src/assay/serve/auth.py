"""Bearer-token checks: writes always need the token when one is set; reads only when configured."""

from __future__ import annotations

import hmac

from fastapi import Request

from assay.serve.errors import ApiError
from assay.serve.settings import ServeSettings


def authorized(settings: ServeSettings, header: str) -> bool:
    """Whether an ``Authorization`` header value carries the token (always, when no token is set)."""
    if not settings.token:
        return True
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), settings.token.encode())


def _check(request: Request, settings: ServeSettings) -> None:
    if not authorized(settings, request.headers.get("authorization", "")):
        raise ApiError("unauthorized", "this request needs `Authorization: Bearer <ASSAY_SERVE_TOKEN>`")


async def require_write(request: Request) -> None:
    """FastAPI dependency of write endpoints."""
    _check(request, request.app.state.settings)


async def require_read(request: Request) -> None:
    """FastAPI dependency of read endpoints: checks the token only with ``require_token_for_reads``."""
    settings: ServeSettings = request.app.state.settings
    if settings.require_token_for_reads:
        _check(request, settings)
