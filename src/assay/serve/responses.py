"""The bodies the service answers with: a model built here as JSON, and an exception in the API's error shape."""

from __future__ import annotations

import logging

from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from assay.serve.database import ServeStorageError
from assay.serve.errors import ApiError

_log = logging.getLogger("assay.serve")


def json_response(model: BaseModel) -> Response:
    """The body of a model built here: FastAPI would validate it a second time against the response model."""
    return Response(model.model_dump_json(), media_type="application/json")


def error_response(exc: Exception) -> JSONResponse:
    """The answer to an exception a request raised: an :class:`ApiError` as it says (401 with
    ``WWW-Authenticate``), a :class:`ServeStorageError` as ``storage_error`` (the client is told why, not where the
    database lives), anything else as ``internal_error``, logged."""
    if isinstance(exc, ApiError):
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)
    if isinstance(exc, ServeStorageError):
        error = ApiError("storage_error", f"the database is unavailable: {exc.reason}")
    else:
        _log.error("assay serve: unexpected %s", type(exc).__name__, exc_info=exc)
        error = ApiError("internal_error", f"unexpected {type(exc).__name__}; the request changed nothing")
    return JSONResponse(error.body(), status_code=error.status)
