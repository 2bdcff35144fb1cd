"""Where a report may be written: it holds check values and holdout cases, so never where a proposer or a
candidate reads (the candidates' worktrees, the artifact's editable files)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from assay.config import AssayConfig
from assay.errors import AssayError
from assay.fsutil import atomic_write_text


def default_run_output(config: AssayConfig, run_id: str) -> Path:
    """``<data dir>/runs/<run>/report.html``: the run folder, which the jail hides from proposers."""
    return config.data_path / "runs" / run_id / "report.html"


def check_output(config: AssayConfig, path: Path) -> Path:
    """``path`` resolved, or an AssayError when a proposer or candidate could read it there."""
    target = path.resolve()
    if target.is_relative_to(config.data_path / "worktrees"):
        raise AssayError(f"{path}: inside the candidates' worktrees; write the report elsewhere")
    if target.is_relative_to(config.artifact_dir):
        rel = target.relative_to(config.artifact_dir).as_posix()
        if any(fnmatch.fnmatch(rel, pattern) for pattern in config.artifact.paths):
            raise AssayError(
                f"{path}: one of the artifact's files (artifact.paths); write the report elsewhere"
            )
    if target.is_dir():
        raise AssayError(f"{path}: is a directory; give a file name such as report.html")
    return target


def write_report(config: AssayConfig, path: Path, html: str) -> Path:
    """Write ``html`` atomically to ``path`` (checked by :func:`check_output`); return where it went."""
    target = check_output(config, path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, html)
    except OSError as exc:
        raise AssayError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return target
