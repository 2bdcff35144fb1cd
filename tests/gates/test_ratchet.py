import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.gates import GATES, GateInput
from assay.gates.ratchet import RatchetGate
from assay.model import CaseResult, Output, Split
from assay.static.report import Finding, StaticReport


def result(
    verdicts: dict[str, bool],
    *,
    scores: dict[str, float] | None = None,
    tokens: int = 0,
    seconds: float = 0.01,
    cpu: float | None = None,
) -> EvalResult:
    """Dev results with these verdicts; a case scores 1.0 or 0.0 by its verdict unless ``scores`` gives it one.
    Each case took ``seconds`` of wall time and ``cpu`` seconds of CPU time (None: not measured)."""
    cases = [
        CaseResult(
            id=cid,
            split=Split.DEV,
            passed=ok,
            score=(scores or {}).get(cid, 1.0 if ok else 0.0),
            output=Output(text="x", tokens_in=tokens, duration_s=seconds, cpu_s=cpu),
        )
        for cid, ok in verdicts.items()
    ]
    return EvalResult(cases=cases)


BASE = {"a": True, "b": False, "c": False, "d": True}


async def decide(parent, candidate, **kwargs):
    return await RatchetGate().decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent, **kwargs)
    )


async def test_strict_improvement_is_kept():
    decision = await decide(result(BASE), result({**BASE, "b": True}))
    assert decision.keep and decision.action == "keep"
    assert decision.dimensions["progress"].numbers["pass_rate"] == 0.75


async def test_no_change_is_discarded_with_reason():
    decision = await decide(result(BASE), result(BASE))
    assert not decision.keep
    assert any(reason.startswith("progress: no improvement") for reason in decision.reasons)


async def test_regression_blocks_even_with_net_gain():
    decision = await decide(result(BASE), result({"a": False, "b": True, "c": True, "d": True}))
    assert not decision.keep
    assert decision.dimensions["progress"].passed
    assert not decision.dimensions["regression"].passed
    assert decision.dimensions["regression"].numbers["regressed"] == ["a"]


@pytest.mark.parametrize(("passes", "keep"), [(2, True), (3, True), (1, False)])
async def test_single_regression_rerun_as_noise(passes, keep):
    calls = []

    async def rerun(case_id: str, n: int) -> int:
        calls.append((case_id, n))
        return passes

    decision = await decide(result(BASE), result({"a": False, "b": True, "c": True, "d": True}), rerun=rerun)
    assert calls == [("a", 3)]
    assert decision.keep is keep


async def test_two_regressions_are_not_rerun():
    async def rerun(case_id: str, n: int) -> int:
        raise AssertionError("must not rerun")

    decision = await decide(result(BASE), result({"a": False, "b": True, "c": True, "d": False}), rerun=rerun)
    assert not decision.keep


async def test_tie_kept_only_with_a_benefit():
    parent = result(BASE, tokens=100)
    assert (await decide(parent, result(BASE, tokens=100))).keep is False
    assert (await decide(parent, result(BASE, tokens=80))).keep is True
    sized = await decide(result(BASE), result(BASE), parent_size=1000, candidate_size=900)
    assert sized.keep and "artifact size" in sized.dimensions["progress"].detail


async def test_cost_above_twice_baseline_is_discarded():
    decision = await decide(result(BASE, tokens=100), result({**BASE, "b": True}, tokens=250))
    assert not decision.keep
    assert "tokens per case" in decision.dimensions["cost"].detail


async def test_safety_and_structure_from_static_reports():
    critical = StaticReport(
        findings=[Finding(severity="critical", rule="secret", file="p.md", message="a key")]
    )
    warning = StaticReport(findings=[Finding(severity="warning", rule="sudo", file="p.md", message="sudo")])
    gained = result({**BASE, "b": True})
    blocked = await decide(result(BASE), gained, candidate_static=critical)
    assert not blocked.dimensions["structure"].passed and not blocked.dimensions["safety"].passed
    more_warnings = await decide(result(BASE), gained, parent_static=StaticReport(), candidate_static=warning)
    assert not more_warnings.keep and "warnings increased" in more_warnings.dimensions["safety"].detail


def test_registry():
    assert GATES.get("ratchet") is RatchetGate


def scored(scores: dict[str, float]) -> EvalResult:
    """Cases pass at a score of 0.9 or more (a quality score with a pass bar, as in the binpack example)."""
    cases = [
        CaseResult(id=cid, split=Split.DEV, passed=s >= 0.9, score=s, output=Output(text="x"))
        for cid, s in scores.items()
    ]
    return EvalResult(cases=cases)


async def test_a_higher_pass_rate_does_not_buy_a_lower_mean_score():
    parent = scored({"a": 0.85, "b": 0.86, "c": 0.87, "d": 0.88})  # none passes, mean 0.865
    wrecked = scored({"a": 0.95, "b": 0.0, "c": 0.1, "d": 0.2})  # one passes, mean 0.31
    decision = await decide(parent, wrecked)
    assert not decision.keep
    assert "trade-off" in decision.dimensions["progress"].detail
    slight = scored({"a": 0.95, "b": 0.84, "c": 0.85, "d": 0.80})  # one passes, mean 0.86: 0.005 lower
    assert not (await decide(parent, slight)).keep  # the tolerance is min_delta: 0 for a gate built by hand

    async def with_gate(gate: RatchetGate) -> bool:
        return (await gate.decide(GateInput(parent=parent, candidate=slight, baseline=parent))).keep

    assert await with_gate(RatchetGate(score_tolerance=0.01))
    assert await with_gate(RatchetGate(min_delta=0.005))  # within the standard preset's threshold
    assert not await with_gate(RatchetGate(min_delta=0.002))  # deep's threshold: a trade-off


async def test_an_unfixable_case_both_fail_is_left_out_of_progress():
    parent = result(BASE)
    worse_elsewhere = result({**BASE, "d": False})
    decision = await decide(parent, worse_elsewhere, unfixable=frozenset({"b", "c"}))
    numbers = decision.dimensions["progress"].numbers
    assert (numbers["parent_pass_rate"], numbers["pass_rate"]) == (1.0, 0.5)  # over a and d only


async def test_fixing_an_unfixable_case_is_a_gain_not_a_tie():
    decision = await decide(result(BASE), result({**BASE, "b": True}), unfixable=frozenset({"b", "c"}))
    assert decision.keep, decision.reasons
    numbers = decision.dimensions["progress"].numbers
    assert (numbers["parent_pass_rate"], numbers["pass_rate"]) == (pytest.approx(2 / 3), 1.0)


def timed(seconds: dict[str, float]) -> EvalResult:
    base = result({cid: True for cid in seconds})
    for case in base.cases:
        case.output.duration_s = seconds[case.id]
    return base


async def test_time_is_judged_on_what_most_cases_say():
    baseline = timed({"a": 0.2, "b": 0.2, "c": 0.2, "d": 0.2})
    # One case hung until its timeout: the mean is 2.6x the baseline's, the typical case is not slower.
    one_hung = await RatchetGate().decide(
        GateInput(
            parent=baseline, candidate=timed({"a": 0.2, "b": 0.2, "c": 0.2, "d": 1.5}), baseline=baseline
        )
    )
    assert one_hung.dimensions["cost"].passed, one_hung.dimensions["cost"].detail
    assert one_hung.dimensions["cost"].numbers["median_time_ratio"] == 1.0
    # Every case slower by 2.5x: too slow.
    slower = await RatchetGate().decide(
        GateInput(parent=baseline, candidate=timed(dict.fromkeys("abcd", 0.5)), baseline=baseline)
    )
    assert not slower.dimensions["cost"].passed
    assert "time per case" in slower.dimensions["cost"].detail
    # Too few cases in common to pair: the means decide, as before.
    few = await RatchetGate().decide(
        GateInput(parent=baseline, candidate=timed({"x": 0.2, "y": 1.5}), baseline=baseline)
    )
    assert not few.dimensions["cost"].passed


async def test_time_is_judged_on_cpu_time_which_load_does_not_stretch():
    baseline = result(dict.fromkeys("abcd", True), seconds=0.2, cpu=0.15)
    # The same work on a loaded machine: every case's wall time 2.5x the baseline's, its CPU time the same.
    loaded = result(dict.fromkeys("abcd", True), seconds=0.5, cpu=0.15)
    kept = await RatchetGate().decide(GateInput(parent=baseline, candidate=loaded, baseline=baseline))
    cost = kept.dimensions["cost"]
    assert cost.passed, cost.detail
    assert cost.numbers["clock"] == "cpu" and cost.numbers["seconds_per_case"] == 0.15
    # More work: the CPU time is 2.5x the baseline's, on a quiet machine as on a loaded one.
    for wall in (0.2, 0.5):
        slower = result(dict.fromkeys("abcd", True), seconds=wall, cpu=0.375)
        decision = await RatchetGate().decide(GateInput(parent=baseline, candidate=slower, baseline=baseline))
        assert decision.dimensions["cost"].detail == "CPU time per case above 2x the baseline"
        assert decision.dimensions["cost"].numbers["median_time_ratio"] == 2.5
    # A baseline recorded before CPU time was (or a runner that does not measure it): wall time decides.
    untimed = result(dict.fromkeys("abcd", True), seconds=0.2)
    old = await RatchetGate().decide(GateInput(parent=untimed, candidate=loaded, baseline=untimed))
    assert old.dimensions["cost"].numbers["clock"] == "wall"
    assert old.dimensions["cost"].detail == "time per case above 2x the baseline"


async def test_figures_on_a_subset_say_so_and_figures_on_every_case_do_not():
    parent, candidate = result(BASE), result({**BASE, "d": False})
    subset = await decide(parent, candidate, unfixable=frozenset({"b", "c"}))
    assert subset.dimensions["progress"].detail == (
        "worse: pass rate 1.000 -> 0.500, score 1.000 -> 0.500 on the 2 dev cases not yet marked unfixable (2 left out)"
    )
    whole = await decide(parent, candidate)
    assert whole.dimensions["progress"].detail == "worse: pass rate 0.500 -> 0.250, score 0.500 -> 0.250"
    # An unfixable case the candidate fixed stays in, and is not counted as left out.
    fixed = await decide(parent, result({**BASE, "b": True}), unfixable=frozenset({"b", "c"}))
    assert fixed.dimensions["progress"].detail.endswith(
        "on the 3 dev cases not yet marked unfixable (1 left out)"
    )
    tie = await decide(parent, result(BASE), unfixable=frozenset({"c"}))
    assert tie.dimensions["progress"].detail == (
        "no improvement (tie on pass rate and score, no benefit) on the 3 dev cases not yet marked unfixable (1 left out)"
    )


async def test_min_delta_zero_takes_any_rise_and_remembers_nothing():
    gate = RatchetGate()
    graded = {"a": 0.9, "b": 0.95}
    parent = result({"a": True, "b": True}, scores=graded)
    decision = await gate.decide(
        GateInput(
            parent=parent,
            candidate=result({"a": True, "b": True}, scores={**graded, "b": 0.951}),
            baseline=parent,
        )
    )
    assert decision.keep and "trend" not in decision.dimensions
    assert "threshold" not in decision.dimensions["progress"].numbers and gate.snapshot() == {}


async def test_a_score_rise_under_min_delta_is_a_tie_but_a_higher_pass_rate_is_progress():
    from tests.gates.test_backpressure import step

    under = await step(RatchetGate(min_delta=0.01), 0.5, 0.505)  # one passing case, its score +0.005
    assert not under.keep
    assert under.dimensions["progress"].detail == (
        "no improvement (score +0.0050 under the threshold 0.0100, a tie, no benefit)"
    )
    assert (await step(RatchetGate(min_delta=0.01), 0.5, 0.51)).keep  # exactly min_delta
    smaller = await RatchetGate(min_delta=0.01).decide(
        GateInput(
            parent=scored({"a": 0.5}),
            candidate=scored({"a": 0.505}),
            baseline=scored({"a": 0.5}),
            parent_size=1000,
            candidate_size=900,
        )
    )
    assert smaller.keep and smaller.dimensions["progress"].detail.startswith(
        "score +0.0050 under the threshold"
    )
    # A newly passing case is progress whatever the mean score's rise (the pass bar here is 0.9).
    parent = scored({"a": 0.89, "b": 0.95})
    passes = await RatchetGate(min_delta=0.01).decide(
        GateInput(parent=parent, candidate=scored({"a": 0.9, "b": 0.95}), baseline=parent)
    )
    assert passes.keep and passes.dimensions["progress"].numbers["threshold"] == 0.01


@pytest.mark.parametrize(
    ("moves", "keep"),
    [
        ([0.002] * 5, True),  # 5 of 5 changed cases better: p = 1/32
        ([0.002] * 4, False),  # 4 of 4: p = 1/16, not enough
        ([0.002] * 8 + [-0.001], True),  # 8 of 9: p = 10/512
        ([0.002] * 7 + [-0.001] * 2, False),  # 7 of 9: p = 46/512
        ([0.004] + [0.0] * 9, False),  # one case carries the whole rise
    ],
)
async def test_a_rise_under_min_delta_that_every_case_bears_out_is_a_gain(moves, keep):
    parent = scored({f"c{i}": 0.5 for i in range(len(moves))})
    candidate = scored({f"c{i}": 0.5 + m for i, m in enumerate(moves)})
    decision = await RatchetGate(min_delta=0.01).decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent)
    )
    assert candidate.mean_score - parent.mean_score < 0.01
    assert decision.keep is keep
    progress = decision.dimensions["progress"]
    if keep:
        better = sum(1 for m in moves if m > 0)
        assert f"but {better} of {sum(1 for m in moves if m)} changed cases scored higher" in progress.detail
        assert progress.numbers["sign_p"] <= 0.05
    else:
        assert "sign_p" not in progress.numbers


async def test_a_consistent_fall_is_never_a_gain():
    parent = scored({f"c{i}": 0.5 for i in range(8)})
    candidate = scored({f"c{i}": 0.499 for i in range(8)})
    decision = await RatchetGate(min_delta=0.01).decide(
        GateInput(parent=parent, candidate=candidate, baseline=parent)
    )
    assert not decision.keep and decision.dimensions["progress"].detail.startswith("worse")


async def test_the_threshold_halves_after_three_flat_generations_to_a_floor_and_resets_on_a_keep():
    from tests.gates.test_backpressure import step

    gate = RatchetGate(min_delta=0.01)
    thresholds, triggers = [], []
    for _ in range(7):  # a best that stays at 0.5 and candidates that gain nothing: flat, and discarded
        decision = await step(gate, 0.5, 0.5)
        assert decision.action == "discard"
        trend = decision.dimensions["trend"]
        assert (
            trend.passed
            and decision.dimensions["progress"].numbers["threshold"] == trend.numbers["effective_min_delta"]
        )
        thresholds.append(trend.numbers["effective_min_delta"])
        triggers.append((trend.numbers["plateau"], trend.numbers["rollback_streak"]))
    assert thresholds == pytest.approx(
        [0.01, 0.01, 0.01, 0.005, 0.0025, 0.00125, 0.00125]
    )  # floor min_delta/8
    assert triggers[:4] == [(False, False)] * 3 + [(True, True)]
    kept = await step(gate, 0.5, 0.5015)  # +0.0015: a tie at 0.01, a gain at the floor
    assert (
        kept.keep and kept.dimensions["trend"].detail == "threshold 0.00125 (plateau, 3 rollbacks in a row)"
    )
    assert gate.relaxation.threshold == 0.01  # back to min_delta on a keep
    assert not (await step(gate, 0.5015, 0.503)).keep


async def test_three_discards_in_a_row_relax_even_when_the_scores_moved():
    from tests.gates.test_backpressure import step

    gate = RatchetGate(min_delta=0.01)
    for best in (0.6, 0.7, 0.8):  # parents 0.1 apart: no plateau, each candidate worse
        assert not (await step(gate, best, best - 0.05, parent=str(best))).keep
    decision = await step(gate, 0.8, 0.806)
    assert decision.keep
    trend = decision.dimensions["trend"].numbers
    assert trend["rollback_streak"] and not trend["plateau"] and trend["effective_min_delta"] == 0.005


async def test_the_relaxation_survives_a_snapshot_and_restore():
    from tests.gates.test_backpressure import step

    gate = RatchetGate(min_delta=0.01)
    for _ in range(5):
        await step(gate, 0.5, 0.5)
    snapshot = json.loads(json.dumps(gate.snapshot()))
    resumed = RatchetGate(min_delta=0.01)
    resumed.restore(snapshot)
    assert resumed.snapshot() == gate.snapshot()
    for score in (0.5, 0.5012, 0.5):
        a, b = await step(gate, 0.5, score), await step(resumed, 0.5, score)
        assert a.model_dump() == b.model_dump()
    fresh = RatchetGate(min_delta=0.01)
    fresh.restore({})  # a run recorded before the ratchet remembered anything
    assert fresh.snapshot() == RatchetGate(min_delta=0.01).snapshot()


def test_bad_threshold_options_are_one_line_errors():
    from assay.errors import ConfigError

    with pytest.raises(ConfigError, match="min_delta must be >= 0"):
        RatchetGate(min_delta=-0.1)
    with pytest.raises(ConfigError, match="relax_factor"):
        RatchetGate(min_delta=0.01, relax_factor=0)


# The time rule under load, end to end: the same run twice, the second with the CPUs loaded from the moment its
# baseline was measured (the baseline timed on a quieter machine than its candidates, as in issue 36).
LOADERS = 6  # busy processes, on top of whatever else the machine runs
TIMED = "evolve:\n  target_pass_rate: null\n  stop_on_oscillation: false\n  discards_per_layer: 9\n"


def _decisions_of(project: Path, *, load: bool) -> tuple[list[tuple[str, bool, str]], list[float]]:
    """Each gated candidate's (decision, cost verdict, clock) in a 3-generation run of ``project``, and each
    candidate's wall time per case over the baseline's; with ``load``, busy processes run from the baseline on."""
    from assay.aio import run_sync
    from assay.config import load_config
    from assay.history.runfiles import RunFiles
    from assay.loop.engine import Evolution
    from assay.loop.events import Measured, typed_events

    loaders: list[subprocess.Popen[bytes]] = []

    def report(line: str) -> None:
        if load and line.startswith("baseline:") and not loaders:
            loaders.extend(
                subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(LOADERS)
            )

    try:
        evolution = Evolution(load_config(project / "assay.yaml"), max_generations=3, report=report)
        outcome = run_sync(evolution.start())
    finally:
        for loader in loaders:
            loader.kill()
            loader.wait()
    assert not load or loaders, "the load never started"
    files = RunFiles(project / ".assay" / "runs" / outcome.run_id)
    decided = [
        (r.decision, r.gate["cost"].passed, r.gate["cost"].numbers["clock"])
        for r in files.read_candidates()[1:]
        if "cost" in r.gate
    ]
    walls = [
        sum(c.output.duration_s for c in e.dev.cases) / len(e.dev.cases)
        for e in typed_events(files.read_events())
        if isinstance(e, Measured) and e.tier == "L2" and e.dev is not None
    ]
    return decided, [w / walls[0] for w in walls[1:]]


@pytest.mark.e2e
def test_two_identical_runs_make_the_same_decisions_while_another_process_loads_the_cpus(
    tmp_path: Path,
) -> None:
    from tests.loop.conftest import make_project

    # 4000 items: about 0.1 s of CPU per case, above the 50 ms under which time is not judged.
    runs = [make_project(tmp_path / name, cases=4, items=4000, extra=TIMED) for name in ("quiet", "loaded")]
    quiet, _ = _decisions_of(runs[0], load=False)
    loaded, slowdown = _decisions_of(runs[1], load=True)
    assert len(quiet) == 3 and loaded == quiet, slowdown
    # Judged by CPU time, and within the budget: no candidate changes the work per case much. (By wall time,
    # a candidate measured under the load is up to ``max(slowdown)`` times the baseline's.)
    assert all(clock == "cpu" and cost for _, cost, clock in loaded), slowdown
