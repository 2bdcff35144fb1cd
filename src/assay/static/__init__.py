"""L1 static tier: structure, syntax and security checks of the editable files, in seconds, without an LLM.

``scan_artifact(artifact_dir, paths, kind, security=True) -> StaticReport``; ``format_report(report)``
renders one line per finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.lazy import lazy_attributes

if TYPE_CHECKING:
    from assay.static.report import Finding, StaticReport, format_report
    from assay.static.scan import scan_artifact

__all__ = ["Finding", "StaticReport", "format_report", "scan_artifact"]
# Imported on first use: the report's types (which every evaluation result holds) without the scanners.
_LAZY = {
    "Finding": "assay.static.report",
    "StaticReport": "assay.static.report",
    "format_report": "assay.static.report",
    "scan_artifact": "assay.static.scan",
}


__getattr__ = lazy_attributes("assay.static", _LAZY)
