"""The line `assay evolve` prints per generation ends with the decision's reason."""

from __future__ import annotations

from assay.history.records import CandidateRecord
from assay.loop.report import generation_line
from assay.model import Dimension


def record(**fields: object) -> CandidateRecord:
    base: dict[str, object] = {
        "run_id": "r",
        "generation": 16,
        "candidate_id": "cand-0016",
        "layer": 3,
        "proposer": "mutate",
        "description": "python: changed operator * to / in priority() line 12",
        "decision": "discard",
        "dev_score": 0.974,
        "dev_pass_rate": 0.571,
    }
    return CandidateRecord.model_validate(base | fields)


def test_the_generation_line_ends_with_the_recorded_reason() -> None:
    line = generation_line(record(reason="discard: regression, weibull-06 PASS→FAIL"))
    assert line.startswith("gen  16 ") and "discard  dev score 0.974 pass 0.571" in line
    assert line.endswith("line 12 — discard: regression, weibull-06 PASS→FAIL")


def test_a_record_without_a_reason_gets_it_from_its_gate() -> None:
    regression = Dimension(
        passed=False, detail="1 cases went PASS->FAIL", numbers={"regressed": ["weibull-06"]}
    )
    line = generation_line(record(gate={"regression": regression}))
    assert line.endswith(" — discard: regression, weibull-06 PASS→FAIL")
