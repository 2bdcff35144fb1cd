"""Checks judge one output each. One registry (``CHECKS``) maps type names to implementations."""

from assay.checks import budget, files, judged, programs, similar, structured, text
from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, build_check

__all__ = ["CHECKS", "Check", "CheckContext", "CheckSpecError", "build_check"]
del budget, files, judged, programs, similar, structured, text
