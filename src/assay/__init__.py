"""assay: make any evaluable artifact improve itself against cases, keeping only changes that prove better."""

from assay.model import Case, CaseResult, CheckResult, CheckSpec, Output, Split

__all__ = ["Case", "CaseResult", "CheckResult", "CheckSpec", "Output", "Split"]
__version__ = "0.1.0"
