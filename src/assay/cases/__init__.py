"""Loading cases (native, skill-creator evals.json, promptfoo) and splitting them."""

from assay.cases.loader import load_cases
from assay.cases.split import SplitResult, assign_splits, select

__all__ = ["SplitResult", "assign_splits", "load_cases", "select"]
