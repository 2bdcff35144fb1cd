"""Errors the HTTP layer turns into 4xx/5xx answers with a stable ``code`` and a one-line ``message``."""

from __future__ import annotations

from assay.errors import AssayError

# code -> HTTP status; the codes are part of the API and do not change.
ERROR_STATUS: dict[str, int] = {
    "invalid_request": 422,
    "missing_models": 422,
    "self_comparison": 422,
    "invalid_confidence": 422,
    "invalid_tie": 422,
    "invalid_name": 422,
    "invalid_cost": 422,
    "invalid_score": 422,
    "unknown_variant": 404,
    "category_conflict": 409,
    "idempotency_conflict": 409,
    "no_candidates": 422,
    "unknown_backend": 422,
    "unauthorized": 401,
    "body_timeout": 408,
    "body_too_large": 413,
    "headers_too_large": 431,
    "not_found": 404,
    "method_not_allowed": 405,
    "internal_error": 500,
    "storage_error": 503,
}


class ApiError(AssayError):
    """A request the service refuses: ``code`` is one of :data:`ERROR_STATUS`, ``message`` says why."""

    def __init__(self, code: str, message: str, **detail: object) -> None:
        if code not in ERROR_STATUS:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.message = message
        self.detail = detail
        super().__init__(message)

    @property
    def status(self) -> int:
        """The HTTP status of this error."""
        return ERROR_STATUS[self.code]

    def body(self) -> dict[str, object]:
        """The JSON body: ``{"error": {"code", "message", ...detail}}``."""
        return {"error": {"code": self.code, "message": self.message, **self.detail}}
