"""L1 static tier: structure, syntax and security checks of the editable files, in seconds, without an LLM.

``scan_artifact(artifact_dir, paths, kind, security=True) -> StaticReport``; ``format_report(report)``
renders one line per finding.
"""

from assay.static.report import Finding, StaticReport, format_report
from assay.static.scan import scan_artifact

__all__ = ["Finding", "StaticReport", "format_report", "scan_artifact"]
