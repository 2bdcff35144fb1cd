"""Checks judge one output each. One registry (``CHECKS``) maps type names to implementations."""

from assay.checks import budget, files, javascript, judged, programs, similar, structured, text
from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, build_check, prose_check_types

__all__ = ["CHECKS", "Check", "CheckContext", "CheckSpecError", "build_check", "prose_check_types"]
del budget, files, javascript, judged, programs, similar, structured, text
