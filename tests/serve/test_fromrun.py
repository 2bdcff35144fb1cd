"""``--from-run``: kept candidates of a run folder become variants; bad folders are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.history.records import CandidateRecord
from assay.history.runfiles import RunFiles
from assay.serve.fromrun import find_run, kept_variants


def _candidate(n: int, decision: str, commit: str | None) -> CandidateRecord:
    return CandidateRecord(
        run_id="r1",
        generation=n,
        candidate_id=f"cand-{n:04d}",
        commit=commit,
        layer=1,
        proposer="mutate",
        description=f"edit\t{n}",
        decision=decision,
        tokens=4_000_000,
        cost_usd=2.0,  # type: ignore[arg-type]
    )


def test_kept_candidates_from_a_run_written_by_runfiles(tmp_path: Path) -> None:
    files = RunFiles(tmp_path / ".assay" / "runs" / "r1")
    for n, decision, commit in [
        (0, "baseline", "a" * 40),
        (1, "keep", "b" * 40),
        (2, "discard", None),
        (3, "keep", None),
    ]:
        files.append_candidate(_candidate(n, decision, commit))
    folder = find_run("r1", tmp_path / ".assay")
    variants = kept_variants(folder)
    assert [v.name for v in variants] == ["cand-0001@bbbbbbb", "cand-0003"]
    assert variants[0].cost_per_1m == 0.5 and variants[0].description == "edit\t1"
    files.experiments_path.unlink()
    assert [v.name for v in kept_variants(folder)] == ["cand-0001@bbbbbbb", "cand-0003"]


def test_missing_and_damaged_runs_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / ".assay" / "runs" / "r9").mkdir(parents=True)
    with pytest.raises(AssayError, match="no run folder") as err:
        find_run("nope", tmp_path / ".assay")
    assert "known runs: r9" in str(err.value) and "\n" not in str(err.value)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "experiments.jsonl").write_text(json.dumps({"run_id": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(AssayError, match=r"experiments.jsonl:1: not a valid candidate record"):
        kept_variants(find_run(str(bad)))


def test_latest_is_the_newest_run(tmp_path: Path) -> None:
    data = tmp_path / ".assay"
    for run_id in ("20261130-010000-aaaa", "20261130-020000-bbbb"):
        RunFiles(data / "runs" / run_id).append_candidate(_candidate(1, "keep", "c" * 40))
    (data / "runs" / "20261130-030000-empty").mkdir()  # a run that never logged a candidate
    assert find_run("latest", data).name == "20261130-020000-bbbb"
    with pytest.raises(AssayError, match="no run folder"):
        find_run("latest", tmp_path / "elsewhere")
