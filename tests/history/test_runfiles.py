"""Run files: appends, idempotency across reopen, TSV escaping, torn-line repair, the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.history.records import CandidateRecord, EventRecord, candidate_id
from assay.history.runfiles import RESULTS_COLUMNS, RunFiles, RunFilesError, results_row


def _candidate(n: int, **overrides: object) -> CandidateRecord:
    fields: dict[str, object] = {
        "run_id": "r1",
        "generation": n,
        "candidate_id": candidate_id(n),
        "commit": f"c{n:039d}",
        "layer": 1,
        "proposer": "mutate",
        "description": f"change {n}",
        "decision": "keep" if n % 2 else "discard",
        "dev_score": 0.5 + n / 100,
        "delta": 0.01,
        "tokens": 10 * n,
        "time": "2025-01-01T00:00:00+00:00",
        "gate": {"progress": {"passed": True, "detail": "better"}},
    }
    fields.update(overrides)
    return CandidateRecord.model_validate(fields)


def _event(seq: int) -> EventRecord:
    return EventRecord(run_id="r1", seq=seq, kind="generation", data={"n": seq})


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_append_candidate_writes_both_views(tmp_path: Path) -> None:
    files = RunFiles(tmp_path / "run")
    rec = _candidate(1, holdout_score=None)
    assert files.append_candidate(rec) is True
    assert files.read_candidates() == [rec]
    assert _lines(files.results_path)[0].split("\t") == list(RESULTS_COLUMNS)
    (row,) = files.read_results_tsv()
    assert row["candidate"] == "cand-0001" and row["generation"] == "1" and row["decision"] == "keep"
    assert row["holdout_score"] == "" and row["delta"] == "+0.01" and row["tokens"] == "10"
    assert json.loads(_lines(files.experiments_path)[0])["gate"] == {
        "progress": {"passed": True, "detail": "better", "numbers": {}}
    }


def test_tabs_newlines_and_backslashes_are_escaped(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    description = "split\tcolumns\nand lines\r\\n literal"
    files.append_candidate(_candidate(1, description=description, proposer="llm\tx"))
    assert len(_lines(files.results_path)) == 2
    (row,) = files.read_results_tsv()
    assert row["description"] == description and row["proposer"] == "llm\tx"
    assert files.read_candidates()[0].description == description


def test_appends_are_idempotent_and_keys_survive_reopen(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    assert files.append_candidate(_candidate(1))
    assert not files.append_candidate(_candidate(1))
    assert files.append_event(_event(1)) and files.append_event(_event(2))
    assert not files.append_event(_event(1))

    again = RunFiles(tmp_path)
    assert not again.append_candidate(_candidate(1))
    assert not again.append_event(_event(2))
    assert again.append_event(_event(3))
    assert [e.seq for e in again.read_events()] == [1, 2, 3]
    assert len(again.read_candidates()) == 1 and len(again.read_results_tsv()) == 1
    assert again.repaired == []


def test_torn_last_lines_are_cut_on_open(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.append_candidate(_candidate(1))
    files.append_event(_event(1))
    whole = {p: p.read_bytes() for p in (files.results_path, files.experiments_path, files.events_path)}
    for path, data in whole.items():
        last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        with path.open("ab") as handle:
            handle.write(last[: len(last) // 2])  # killed half-way through the next line

    again = RunFiles(tmp_path)
    assert sorted(again.repaired) == sorted(whole)
    assert {p: p.read_bytes() for p in whole} == whole
    assert again.append_candidate(_candidate(2)) and again.append_event(_event(2))
    assert [c.candidate_id for c in again.read_candidates()] == ["cand-0001", "cand-0002"]
    assert [r["candidate"] for r in again.read_results_tsv()] == ["cand-0001", "cand-0002"]
    assert [e.seq for e in again.read_events()] == [1, 2]


def test_unparseable_last_line_with_newline_is_cut(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.append_event(_event(1))
    with files.events_path.open("a", encoding="utf-8") as handle:
        handle.write('{"run_id": "r1", "seq": 2}\n')  # valid JSON, not an event
    with files.results_path.open("a", encoding="utf-8") as handle:
        handle.write("7\tcand-0007\n")
    again = RunFiles(tmp_path)
    assert set(again.repaired) == {files.events_path, files.results_path}
    assert [e.seq for e in again.read_events()] == [1]
    assert again.read_results_tsv() == []


def test_kill_between_the_two_candidate_files_does_not_duplicate_rows(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.append_candidate(_candidate(1))
    files.experiments_path.write_text("", encoding="utf-8")  # the tsv row landed, the jsonl line did not
    again = RunFiles(tmp_path)
    assert again.append_candidate(_candidate(1))
    assert len(again.read_candidates()) == 1 and len(again.read_results_tsv()) == 1


def test_damaged_line_before_the_last_is_a_one_line_error(tmp_path: Path) -> None:
    files = RunFiles(tmp_path)
    files.append_event(_event(1))
    files.append_event(_event(2))
    text = files.events_path.read_text(encoding="utf-8").splitlines()
    files.events_path.write_text("not json\n" + text[1] + "\n", encoding="utf-8")
    with pytest.raises(RunFilesError) as err:
        RunFiles(tmp_path)
    assert f"{files.events_path}:1: not a valid EventRecord" in str(err.value)
    assert "\n" not in str(err.value)


def test_write_plan_is_atomic_and_replaces(tmp_path: Path) -> None:
    files = RunFiles(tmp_path / "deep" / "run")
    files.write_plan("# plan\nfirst\n")
    files.write_plan("# plan\nsecond\n")
    assert files.plan_path.read_text(encoding="utf-8") == "# plan\nsecond\n"
    assert sorted(p.name for p in files.run_dir.iterdir()) == ["plan.md", "results.tsv"]
    assert files.traces_dir(7) == files.run_dir / "traces" / "gen-007"


def test_results_row_formats_numbers_for_people() -> None:
    row = dict(zip(RESULTS_COLUMNS, results_row(_candidate(2, delta=-0.125, seconds=3.14159)), strict=True))
    assert row["delta"] == "-0.125" and row["seconds"] == "3.14" and row["dev_score"] == "0.52"
    assert row["commit"].startswith("c0") and row["decision"] == "discard"
