"""Loading cases (native, skill-creator evals.json, promptfoo) and splitting them.

The names below are imported on first use, so that a light module of this package (the templates, the
promptfoo provider bridge run in a runner's worker) does not pull in every loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.lazy import lazy_attributes

if TYPE_CHECKING:
    from assay.cases.loader import load_cases
    from assay.cases.split import SplitResult, assign_splits, select

__all__ = ["SplitResult", "assign_splits", "load_cases", "select"]
_LAZY = {
    "load_cases": "assay.cases.loader",
    "SplitResult": "assay.cases.split",
    "assign_splits": "assay.cases.split",
    "select": "assay.cases.split",
}


__getattr__ = lazy_attributes("assay.cases", _LAZY)
