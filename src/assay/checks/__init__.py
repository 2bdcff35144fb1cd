"""Checks judge one output each. One registry (``CHECKS``) maps type names to implementations."""

from assay.checks import (
    budget,
    composite,
    files,
    graded,
    javascript,
    judged,
    markup,
    metrics,
    programs,
    response,
    similar,
    structured,
    text,
)
from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, build_check, prose_check_types
from assay.checks.composite import needs_judge

__all__ = [
    "CHECKS",
    "Check",
    "CheckContext",
    "CheckSpecError",
    "build_check",
    "needs_judge",
    "prose_check_types",
]
del (
    budget,
    composite,
    files,
    graded,
    javascript,
    judged,
    markup,
    metrics,
    programs,
    response,
    similar,
    structured,
    text,
)
