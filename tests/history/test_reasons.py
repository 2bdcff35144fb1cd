"""One reason per decision, naming the deciding dimension and its numbers: one test per outcome, each on a
decision made by the real gate (so a renamed number breaks the test, not the log)."""

from __future__ import annotations

from assay.evaluation.evaluator import EvalResult
from assay.gates import GateDecision, GateInput
from assay.gates.backpressure import BackpressureGate
from assay.gates.paired import PairedGate
from assay.gates.ratchet import RatchetGate
from assay.gates.trend import TrendGate
from assay.history.reasons import MAX_CHARS, decision_reason, reason_of
from assay.history.records import CandidateRecord
from assay.loop.flags import Flag, gate_flag
from assay.model import Dimension
from assay.static.report import Finding, StaticReport
from tests.gates.test_ratchet import result

BASE = {"weibull-01": True, "weibull-02": False, "weibull-03": False, "weibull-06": True}


def said(decision: GateDecision) -> str:
    """The reason for a gate's decision, as the loop records it (a retry or rollback is a flag on a discard)."""
    flags = [] if decision.action in ("keep", "discard") else [gate_flag(decision.action)]
    return decision_reason("keep" if decision.keep else "discard", decision.dimensions, flags=flags)


async def ratchet(parent: EvalResult, candidate: EvalResult, **kwargs: object) -> GateDecision:
    baseline = kwargs.pop("baseline", parent)
    return await RatchetGate().decide(
        GateInput(parent=parent, candidate=candidate, baseline=baseline, **kwargs)
    )  # type: ignore[arg-type]


async def test_progress_names_the_pass_rate_or_the_score_that_rose() -> None:
    up = await ratchet(result(BASE), result({**BASE, "weibull-02": True}))
    assert said(up) == "keep: dev pass rate 0.500 → 0.750, score +0.250"
    graded = {"weibull-01": 0.9, "weibull-02": 0.95}
    parent = result({"weibull-01": True, "weibull-02": True}, scores=graded)
    better = result({"weibull-01": True, "weibull-02": True}, scores={**graded, "weibull-02": 0.982})
    assert said(await ratchet(parent, better)) == "keep: dev score +0.016 (0.925 → 0.941)"


async def test_a_tie_is_kept_for_its_benefit_named_with_its_size() -> None:
    smaller = await ratchet(result(BASE), result(BASE), parent_size=1000, candidate_size=880)
    assert said(smaller) == "keep: tie on dev, artifact 12% smaller (1000 → 880 bytes)"
    content = await ratchet(
        result(BASE), result(BASE), parent_size=327, candidate_size=278, size_unit="characters of content"
    )
    assert (
        said(content)
        == "keep: tie on dev, artifact 15% smaller in content (327 → 278 characters, comments aside)"
    )
    cheaper = await ratchet(result(BASE, tokens=100), result(BASE, tokens=80))
    assert said(cheaper) == "keep: tie on dev, 20% fewer tokens per case (100 → 80)"
    nothing = await ratchet(result(BASE), result(BASE))
    assert said(nothing) == (
        "discard: no gain, tie on dev (score 0.500, pass rate 0.500), nothing smaller or cheaper"
    )


async def test_a_regression_names_the_case_that_went_pass_to_fail() -> None:
    # The case: a higher pass rate, but one case broke; progress passed, regression decides.
    broke = {"weibull-01": True, "weibull-02": True, "weibull-03": True, "weibull-06": False}
    decision = await ratchet(result(BASE), result(broke))
    assert decision.dimensions["progress"].passed
    assert said(decision) == "discard: regression, weibull-06 PASS→FAIL"

    async def rerun(case_id: str, times: int) -> int:
        return 1

    noisy = await ratchet(result(BASE), result(broke), rerun=rerun)
    assert said(noisy) == "discard: regression, weibull-06 PASS→FAIL (passed 1/3 reruns)"
    both = await ratchet(result(BASE), result(dict.fromkeys(BASE, False)))
    assert said(both) == (
        "discard: regression, 2 cases PASS→FAIL: weibull-01, weibull-06; and the mean score fell too (0.500 → 0.000)"
    )


async def test_what_else_failed_is_said_as_a_plain_fact_never_as_also() -> None:
    # The line: `discard: regression, weibull-06 PASS→FAIL; also progress` read as good news. The pass
    # rate fell because weibull-06 broke, while the graded scores of the others rose: say that.
    graded = {"weibull-01": 1.0, "weibull-02": 0.2, "weibull-03": 0.2, "weibull-06": 1.0}
    parent = result(BASE, scores=graded)
    broke = result(
        {**BASE, "weibull-06": False},
        scores={**graded, "weibull-02": 0.9, "weibull-03": 0.9, "weibull-06": 0.8},
    )
    reason = said(await ratchet(parent, broke))
    assert reason == "discard: regression, weibull-06 PASS→FAIL although the mean score rose (0.600 → 0.900)"
    assert "also" not in reason
    # Progress deciding on its own says the same fact in its own words.
    alone = {"progress": (await ratchet(parent, broke)).dimensions["progress"]}
    assert decision_reason("discard", alone) == (
        "discard: no gain, dev pass rate 0.500 → 0.250 although the mean score rose (0.600 → 0.900)"
    )
    tokens = await ratchet(result(BASE, tokens=100), result({**BASE, "weibull-01": False}, tokens=230))
    assert said(tokens) == (
        "discard: regression, weibull-01 PASS→FAIL; and the mean score fell too (0.500 → 0.250);"
        " and cost, 2.3x the baseline's tokens per case (230 vs 100)"
    )


async def test_worse_and_trade_off_name_the_scores() -> None:
    worse = await ratchet(result(BASE), result({**BASE, "weibull-01": False}, scores={"weibull-01": 0.5}))
    assert (
        said(worse)
        == "discard: regression, weibull-01 PASS→FAIL; and the mean score fell too (0.500 → 0.375)"
    )
    graded = {"weibull-01": 1.0, "weibull-02": 0.9, "weibull-03": 0.9, "weibull-06": 1.0}
    parent = result(BASE, scores=graded)
    traded = result({**BASE, "weibull-02": True}, scores={**graded, "weibull-02": 1.0, "weibull-03": 0.0})
    assert said(await ratchet(parent, traded)) == (
        "discard: trade-off, dev pass rate 0.500 → 0.750 but score 0.950 → 0.750"
    )


async def test_cost_names_the_ratio_to_the_baseline_per_case() -> None:
    tokens = await ratchet(result(BASE, tokens=100), result({**BASE, "weibull-02": True}, tokens=230))
    assert said(tokens) == "discard: cost, 2.3x the baseline's tokens per case (230 vs 100)"
    slow = await ratchet(result(BASE, seconds=0.2), result({**BASE, "weibull-02": True}, seconds=0.6))
    assert said(slow) == "discard: cost, 3.0x the baseline's time per case (0.60s vs 0.20s)"
    busy = await ratchet(
        result(BASE, seconds=0.2, cpu=0.1), result({**BASE, "weibull-02": True}, seconds=0.6, cpu=0.25)
    )
    assert said(busy) == "discard: cost, 2.5x the baseline's CPU time per case (0.25s vs 0.10s)"


async def test_safety_and_an_l1_block_name_the_findings() -> None:
    critical = [Finding(severity="critical", rule="secret", file="p.md", message="a key")] * 2
    blocked = await ratchet(
        result(BASE), result({**BASE, "weibull-02": True}), candidate_static=StaticReport(findings=critical)
    )
    # Safety fails on the same critical findings: said once.
    assert said(blocked) == "discard: L1 static, 2 critical findings"
    warning = [Finding(severity="warning", rule="sudo", file="p.md", message="sudo")]
    warned = await ratchet(
        result(BASE), result({**BASE, "weibull-02": True}), candidate_static=StaticReport(findings=warning)
    )
    assert said(warned) == "discard: safety, warnings 0 → 1"
    # The loop does not run the gate on a candidate L1 blocked: its one dimension counts the findings.
    loop_blocked = Dimension(
        passed=False, detail="critical L1 findings: not evaluated", numbers={"critical": 3}
    )
    assert (
        decision_reason("discard", {"structure": loop_blocked}) == "discard: L1 static, 3 critical findings"
    )


def test_a_candidate_not_evaluated_says_why() -> None:
    failed = decision_reason("invalid", {}, description="proposal failed: the model timed out")
    assert failed == "not evaluated: proposal failed: the model timed out"
    probe = Dimension(passed=False, detail="...", numbers={"probe": ["a", "b", "c"]})
    screened = decision_reason("discard", {"structure": probe}, flags=[Flag.SCREENED_OUT])
    assert screened == "not evaluated: the first 3 dev cases crashed, timed out or printed nothing"
    long = decision_reason("invalid", {}, description="x" * 400)
    assert len(long) == MAX_CHARS and long.endswith("…")
    words = decision_reason(
        "invalid", {}, description="proposal failed: " + "the model answered nothing " * 9
    )
    assert len(words) <= MAX_CHARS and words.endswith("…")
    assert words[:-1].split()[-1] in ("the", "model", "answered", "nothing")  # a whole word before the cut
    one = Dimension(passed=False, detail="...", numbers={"probe": ["a"]})
    assert decision_reason("discard", {"structure": one}) == (
        "not evaluated: the first dev case crashed, timed out or printed nothing"
    )


def scored(score: float) -> EvalResult:
    return result({"c": score >= 0.5}, scores={"c": score})


async def test_backpressure_names_retry_and_rollback_with_the_delta() -> None:
    gate = BackpressureGate()

    async def step(best: float, score: float) -> str:
        data = GateInput(parent=scored(best), candidate=scored(score), baseline=scored(best), parent_id="p")
        return said(await gate.decide(data))

    assert await step(0.5, 0.52) == "keep: dev score +0.0200 (≥ 0.0050)"
    assert await step(0.5, 0.502) == "retry: dev score +0.0020 (< 0.0050), retry 1/2"
    assert await step(0.5, 0.502) == "retry: dev score +0.0020 (< 0.0050), retry 2/2"
    assert await step(0.5, 0.502) == "rollback: dev score +0.0020 (< 0.0050) after 2 retries"
    assert await step(0.5, 0.48) == "rollback: dev score -0.0200 (0.5000 → 0.4800)"


async def test_the_trend_gate_says_its_threshold_was_relaxed() -> None:
    gate = TrendGate()
    data = GateInput(parent=scored(0.5), candidate=scored(0.49), baseline=scored(0.5), parent_id="p")
    for _ in range(3):
        await gate.decide(data)  # three rollbacks in a row relax the threshold
    small = GateInput(parent=scored(0.5), candidate=scored(0.504), baseline=scored(0.5), parent_id="p")
    assert said(await gate.decide(small)) == "keep: dev score +0.0040 (≥ 0.0025, relaxed)"


async def test_the_ratchet_names_a_rise_under_its_threshold_a_tie() -> None:
    gate = RatchetGate(min_delta=0.01)
    same = GateInput(parent=scored(0.5), candidate=scored(0.5), baseline=scored(0.5))
    under = GateInput(parent=scored(0.5), candidate=scored(0.504), baseline=scored(0.5))
    assert said(await gate.decide(under)) == (
        "discard: no gain, dev score +0.0040 (< 0.0100), nothing smaller or cheaper"
    )
    for _ in range(2):
        await gate.decide(same)  # three discards in a row (and a flat best) relax the threshold
    assert said(await gate.decide(under)) == (
        "discard: no gain, dev score +0.0040 (< 0.0050, relaxed), nothing smaller or cheaper"
    )
    assert said(await gate.decide(under)) == "keep: dev score +0.004 (0.500 → 0.504)"  # at 0.0025
    smaller = GateInput(
        parent=scored(0.504),
        candidate=scored(0.5041),
        baseline=scored(0.5),
        parent_size=1000,
        candidate_size=880,
    )
    # The best's scores (0.5, 0.5, 0.504) span less than min_delta: a plateau relaxes the threshold at once.
    assert said(await gate.decide(smaller)) == (
        "keep: tie, dev score +0.0001 (< 0.0050, relaxed), artifact 12% smaller (1000 → 880 bytes)"
    )


async def test_the_paired_gate_names_the_test_it_decided_by() -> None:
    ids = [f"case-{i}" for i in range(16)]
    parent, candidate = result(dict.fromkeys(ids, False)), result(dict.fromkeys(ids, True))
    runs = {"parent_runs": {cid: [0.0] * 6 for cid in ids}, "candidate_runs": {cid: [1.0] * 6 for cid in ids}}
    better = await PairedGate().decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent, **runs)  # type: ignore[arg-type]
    )
    assert said(better).startswith("keep: significantly better, effect +1.000 [")
    same = {
        "parent_runs": {cid: [1.0, 0.0] for cid in ids},
        "candidate_runs": {cid: [0.0, 1.0] for cid in ids},
    }
    flat = await PairedGate().decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent, **same)  # type: ignore[arg-type]
    )
    assert said(flat).startswith("discard: no significant gain, effect +0.000 [")


def test_l3_names_no_hidden_case_and_a_gate_of_ones_own_its_action() -> None:
    lost = Dimension(passed=False, detail="lost 2", numbers={"lost": ["secret-1", "secret-2"]})
    gate = {"progress": Dimension(passed=True), "l3_regression": lost}
    assert decision_reason("discard", gate) == "discard: L3 regression split lost 2 cases"
    own = {"progress": Dimension(passed=False, detail="waiting for a second look")}
    assert decision_reason("discard", own, flags=["gate-hold"]) == "hold: progress, waiting for a second look"


def test_a_record_keeps_its_reason_and_an_old_one_gets_it_derived() -> None:
    tie = Dimension(
        passed=False,
        detail="no improvement",
        numbers={
            "parent_pass_rate": 0.2,
            "pass_rate": 0.2,
            "parent_score": 0.9,
            "score": 0.9,
            "benefit": None,
        },
    )
    old = CandidateRecord.load(
        {
            "run_id": "r",
            "generation": 1,
            "candidate_id": "cand-0001",
            "layer": 1,
            "proposer": "mutate",
            "description": "d",
            "decision": "discard",
            "gate": {"progress": tie.model_dump()},
        }
    )
    assert old.reason == ""
    assert (
        reason_of(old)
        == "discard: no gain, tie on dev (score 0.900, pass rate 0.200), nothing smaller or cheaper"
    )
    recorded = old.model_copy(update={"reason": "discard: as the assay of its time said"})
    assert reason_of(recorded) == "discard: as the assay of its time said"
    baseline = old.model_copy(
        update={"decision": "baseline", "dev_score": 0.8, "dev_pass_rate": 0.5, "gate": {}}
    )
    assert reason_of(baseline) == "baseline: dev score 0.800, pass rate 0.500"


async def test_figures_of_the_fixable_cases_only_name_the_subset_and_its_size() -> None:
    # The gate leaves out cases the best failed generation after generation; its figures are then not the
    # whole dev split's (0.500 here), and the reason says whose they are, in words and with their number.
    decision = await ratchet(result(BASE), result(BASE), unfixable=frozenset({"weibull-02", "weibull-03"}))
    reason = decision_reason("discard", decision.dimensions, dev_score=0.5, dev_pass_rate=0.5)
    assert reason == (
        "discard: no gain, tie on the 2 dev cases not yet marked unfixable (score 1.000, pass rate 1.000),"
        " nothing smaller or cheaper"
    )
    graded = {**dict.fromkeys(BASE, 0.0), "weibull-01": 1.0}
    parent = result({**BASE, "weibull-06": False}, scores=graded)
    fixed = await ratchet(parent, result(BASE), unfixable=frozenset({"weibull-02"}))
    assert said(fixed) == (
        "keep: pass rate 0.333 → 0.667, score +0.333 on the 3 dev cases not yet marked unfixable"
    )
    # A run recorded before the gate counted its subset: named without its size.
    numbers = {
        k: v for k, v in decision.dimensions["progress"].numbers.items() if k not in ("cases", "left_out")
    }
    old = {"progress": decision.dimensions["progress"].model_copy(update={"numbers": numbers})}
    assert "tie on the dev cases not yet marked unfixable (score 1.000" in decision_reason(
        "discard", old, dev_score=0.5, dev_pass_rate=0.5
    )
    whole = decision_reason("discard", (await ratchet(result(BASE), result(BASE))).dimensions, dev_score=0.5)
    assert whole.startswith("discard: no gain, tie on dev (score 0.500")


async def test_a_gate_fed_by_the_tournament_names_the_match_score() -> None:
    data = GateInput(parent=scored(0.5), candidate=scored(0.5), baseline=scored(0.5), scores=(0.5, 0.52))
    assert said(await BackpressureGate().decide(data)) == "keep: match score +0.0200 (≥ 0.0050)"
