"""The line `assay evolve` prints per generation ends with the decision's reason; a decided candidate's commit
gets that reason as its git note, or the run says why it did not."""

from __future__ import annotations

from assay.history.gitrun import GitError
from assay.history.records import CandidateRecord
from assay.loop.report import explain, generation_line
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


class NotesGit:
    """The one call :func:`explain` makes of git: the notes it was asked to write, or a refusal."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.notes: dict[str, str] = {}

    def set_note(self, commit: str, text: str) -> None:
        if self.refuse:
            raise GitError("git notes add -f -F - failed: cannot lock ref 'refs/notes/commits'")
        self.notes[commit] = text


def test_a_decided_commit_gets_its_reason_as_its_note_and_a_refused_note_is_said() -> None:
    regression = Dimension(passed=False, numbers={"regressed": ["weibull-06"]})
    said: list[str] = []
    git = NotesGit()
    decided = record(commit="c" * 40, gate={"regression": regression})
    explain(git, decided, said.append)  # type: ignore[arg-type]
    assert decided.reason == "discard: regression, weibull-06 PASS→FAIL"
    assert git.notes == {"c" * 40: "reason: discard: regression, weibull-06 PASS→FAIL\n"} and said == []
    invalid = record(decision="invalid", description="proposal failed: timeout")
    explain(git, invalid, said.append)  # type: ignore[arg-type]
    assert invalid.reason == "not evaluated: proposal failed: timeout" and len(git.notes) == 1  # no commit

    refused = record(commit="d" * 40, gate={"regression": regression})
    explain(NotesGit(refuse=True), refused, said.append)  # type: ignore[arg-type]
    assert refused.reason == "discard: regression, weibull-06 PASS→FAIL"
    assert said == [
        "cand-0016: its reason is in the run's log, not in a git note (git notes add -f -F - failed: cannot lock"
        " ref 'refs/notes/commits')"
    ]
