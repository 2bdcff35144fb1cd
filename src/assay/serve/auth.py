"""Bearer-token checks: writes always need the token when one is set; reads only when configured."""

from __future__ import annotations

import hmac

from fastapi import Request

from assay.serve.errors import ApiError
from assay.serve.settings import ServeSettings


def _check(request: Request, settings: ServeSettings) -> None:
    if not settings.token:
        return
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), settings.token.encode()):
        raise ApiError("unauthorized", "this request needs `Authorization: Bearer <ASSAY_SERVE_TOKEN>`")


async def require_write(request: Request) -> None:
    """FastAPI dependency of write endpoints."""
    _check(request, request.app.state.settings)


async def require_read(request: Request) -> None:
    """FastAPI dependency of read endpoints: checks the token only with ``require_token_for_reads``."""
    settings: ServeSettings = request.app.state.settings
    if settings.require_token_for_reads:
        _check(request, settings)
