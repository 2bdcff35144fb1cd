"""``scan_artifact``: the L1 static tier in one call (structure, syntax, security; seconds, no LLM)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import get_args

from assay.config import ArtifactKind
from assay.static.cache import ScanCache
from assay.static.report import Finding, StaticReport
from assay.static.security import scan_security
from assay.static.structure import ArtifactFile, check_skill, collect_files, read_text_files
from assay.static.syntax import check_syntax

KINDS = frozenset(get_args(ArtifactKind))


def _order(finding: Finding) -> tuple[int, str, int, str]:
    return (finding.severity != "critical", finding.file, finding.line or 0, finding.rule)


def _scan_files(files: list[ArtifactFile], kind: str, security: bool) -> list[Finding]:
    findings = check_syntax(files, kind)
    if security:
        findings += scan_security({f.rel: f.text for f in files if f.text is not None})
    return findings


def _file_findings(
    files: list[ArtifactFile], kind: str, security: bool, cache: ScanCache | None
) -> list[Finding]:
    """Each file's own findings (syntax, security): from ``cache`` where it has them, else scanned and kept."""
    if cache is None:
        return _scan_files(files, kind, security)
    findings: list[Finding] = []
    missed: dict[str, tuple[ArtifactFile, str]] = {}
    for item in files:
        if item.text is None:
            continue
        key = cache.key(kind=kind, security=security, rel=item.rel, text=item.text)
        known = cache.get(key)
        if known is None:
            missed[item.rel] = (item, key)
        else:
            findings += known
    if missed:
        fresh = _scan_files([item for item, _ in missed.values()], kind, security)
        for rel, (_, key) in missed.items():
            cache.put(key, [f for f in fresh if f.file == rel])
        findings += fresh
    return findings


def scan_artifact(
    artifact_dir: Path, paths: list[str], kind: str, *, security: bool = True, cache: ScanCache | None = None
) -> StaticReport:
    """Check the editable ``paths`` (files, directories or globs relative to ``artifact_dir``).

    Structure: every path matches an existing, non-empty text file inside the artifact. Kind: a skill's
    SKILL.md has frontmatter with ``name`` and ``description``; code parses (Python), config loads
    (JSON, JSON Lines, YAML, TOML); prompt and document are non-empty text. A parse error in a type the
    kind does not own is a warning. Security (``security=True``): destructive commands and secrets are
    critical; home paths, sudo, chmod 777, eval and exec are warnings. Only the editable files are read.
    ``passed`` is False when any finding is critical. Raises ValueError for an unknown ``kind``.
    With a ``cache``, a file whose text it has seen gets its syntax and security findings from there.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown artifact kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    start = time.perf_counter()
    root = Path(artifact_dir).resolve()
    files, findings = collect_files(root, paths)
    findings += read_text_files(files)
    if kind == "skill":
        findings += check_skill(files)
    findings += _file_findings(files, kind, security, cache)
    return StaticReport(
        findings=sorted(findings, key=_order),
        files=[f.rel for f in files],
        duration_s=time.perf_counter() - start,
    )
