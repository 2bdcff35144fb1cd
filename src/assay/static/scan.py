"""``scan_artifact``: the L1 static tier in one call (structure, syntax, security; seconds, no LLM)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import get_args

from assay.config import ArtifactKind
from assay.static.report import Finding, StaticReport
from assay.static.security import scan_security
from assay.static.structure import check_skill, collect_files, read_text_files
from assay.static.syntax import check_syntax

KINDS = frozenset(get_args(ArtifactKind))


def _order(finding: Finding) -> tuple[int, str, int, str]:
    return (finding.severity != "critical", finding.file, finding.line or 0, finding.rule)


def scan_artifact(artifact_dir: Path, paths: list[str], kind: str, *, security: bool = True) -> StaticReport:
    """Check the editable ``paths`` (files, directories or globs relative to ``artifact_dir``).

    Structure: every path matches an existing, non-empty text file inside the artifact. Kind: a skill's
    SKILL.md has frontmatter with ``name`` and ``description``; code parses (Python), config loads
    (JSON, JSON Lines, YAML, TOML); prompt and document are non-empty text. A parse error in a type the
    kind does not own is a warning. Security (``security=True``): destructive commands and secrets are
    critical; home paths, sudo, chmod 777, eval and exec are warnings. Only the editable files are read.
    ``passed`` is False when any finding is critical. Raises ValueError for an unknown ``kind``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown artifact kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    start = time.perf_counter()
    root = Path(artifact_dir).resolve()
    files, findings = collect_files(root, paths)
    findings += read_text_files(files)
    if kind == "skill":
        findings += check_skill(files)
    findings += check_syntax(files, kind)
    if security:
        findings += scan_security({f.rel: f.text for f in files if f.text is not None})
    return StaticReport(
        findings=sorted(findings, key=_order),
        files=[f.rel for f in files],
        duration_s=time.perf_counter() - start,
    )
