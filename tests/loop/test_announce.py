"""The line `assay evolve` prints per generation ends with the decision's reason; a decided candidate's commit
gets that reason as its git note, or the run says why it did not."""

from __future__ import annotations

from assay.history.gitrun import GitError
from assay.history.records import CandidateRecord
from assay.loop.announce import explain, generation_line
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


def test_a_candidate_not_evaluated_shows_no_score_and_its_description_is_cut_at_a_word() -> None:
    probe = Dimension(passed=False, numbers={"probe": ["a", "b", "c"]})
    screened = generation_line(record(flags=["screened-out"], dev_score=0.0, gate={"structure": probe}))
    assert "not evaluated: the first 3 dev cases crashed" in screened
    assert "dev score" not in screened and " pass " not in screened
    failed = generation_line(
        record(decision="invalid", dev_score=None, description="proposal failed: the model timed out")
    )
    assert "dev score" not in failed and failed.endswith(
        "— not evaluated: proposal failed: the model timed out"
    )
    words = (
        "tune on a structure scoring 0.9491: priority.py:priority#1 1.0 -> 0.01041, priority.py:priority#3"
    )
    line = generation_line(record(description=words))
    cut = line.split(") ", 1)[1].split(" — ")[0]
    assert cut.endswith("…") and words.startswith(cut[:-1]) and words[len(cut) - 1] in " ,"


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


def plan(
    evolve: dict[str, object], *, own: tuple[object, ...] = (), tiers: dict[str, object] | None = None
) -> list[str]:
    """plan.md's lines for a project with this ``evolve:`` section (and ``tiers:``; 20 generations)."""
    from assay.config import AssayConfig
    from assay.history.records import RunRecord
    from assay.loop.announce import plan_text
    from assay.presets import resolve

    config = AssayConfig.model_validate(
        {
            "artifact": {"kind": "code", "paths": ["p.py"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python p.py"},
            "evolve": evolve,
            "tiers": tiers or {},
        }
    )
    run = RunRecord(run_id="r", branch="assay/r", base_commit="c" * 40)
    counts = {"dev": 7, "holdout": 2, "regression": 1}
    return plan_text(run, config, resolve(config.evolve), counts, 20, own_stops=own).splitlines()


def line(lines: list[str], start: str) -> str:
    return next(text for text in lines if text.startswith(start))


def test_the_plan_names_the_trend_aware_threshold_of_the_presets_ratchet() -> None:
    gate = line(plan({"preset": "standard"}), "- gate:")
    assert (
        "progress (a higher dev pass rate, or the same and a mean score higher by at least the threshold: min_delta"
        " 0.005, relaxed as seed 000's trend-aware gate: x0.5 after 3 flat generations and after 3 discards in a"
        " row, down to 0.000625, back to 0.005 on a keep)" in gate
    )
    assert "min_delta 0.01," in line(plan({"preset": "quick"}), "- gate:")
    untouched = line(plan({"gate_options": {"min_delta": 0}}), "- gate:")
    assert "(a higher dev pass rate, or the same and a higher mean score)" in untouched
    trend = line(plan({"gate": "trend", "preset": "deep"}), "- gate:")
    assert trend.startswith("- gate: trend (backpressure with min_delta 0.002,") and "3 rollbacks" in trend


def test_the_plan_says_how_l3_flags_overfitting() -> None:
    assert line(plan({}), "- overfitting") == (
        "- overfitting, when the holdout is measured: a gain over the baseline on holdout cases short of the gain"
        " on dev cases by more than chance allows (paired rule: a permutation test of the per-case gains, alpha"
        " 0.05)"
    )
    seed_rule = line(plan({}, tiers={"overfitting": {"rule": "gap", "gap": 0.2}}), "- overfitting")
    assert seed_rule == (
        "- overfitting, when the holdout is measured: a holdout pass rate more than 0.2 below the dev pass rate"
        " (gap rule)"
    )


class Weekends:
    def check(self, run: object) -> str | None:
        return None


def test_the_plan_lists_the_stop_rules_in_force() -> None:
    offline = line(plan({}), "- stops:")
    assert offline == (
        "- stops: also Ctrl-C, a STOP file in this folder, dead end (5 candidates in a row not proposed or not"
        " evaluated), oscillation (content or traded failing cases A -> B -> A -> B), regression (the best's"
        " holdout score falling twice in a row, by more than 0.005 each time), search exhausted (no layer gives a"
        " new candidate)"
    )  # the offline default's layers cycle: never exhausted
    llm = {"proposer": {"type": "llm", "llm": {"model": "openai:gpt-4o-mini"}}}
    limited = line(
        plan(
            {**llm, "stop_on_oscillation": False, "max_tokens": 1000, "max_judge_calls": 5}, own=(Weekends(),)
        ),
        "- stops:",
    )
    assert "budget of 1000 tokens, 5 judge calls" in limited and "all layers exhausted" in limited
    assert "oscillation" not in limited and limited.endswith(", your own Weekends")
