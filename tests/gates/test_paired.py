import json
import random

from assay.evaluation.evaluator import EvalResult
from assay.gates import GATES, GateInput
from assay.gates.paired import PairedGate
from assay.gates.ratchet import RatchetGate
from assay.model import CaseResult, Output, Split
from assay.static.report import Finding, StaticReport

IDS = [f"case-{i}" for i in range(16)]


def result(verdicts: dict[str, bool], *, tokens: int = 0) -> EvalResult:
    return EvalResult(
        cases=[
            CaseResult(
                id=cid,
                split=Split.DEV,
                passed=ok,
                score=float(ok),
                output=Output(text="x", tokens_in=tokens, duration_s=0.01),
            )
            for cid, ok in verdicts.items()
        ]
    )


def sampler_for(parent: dict[str, float], candidate: dict[str, float], calls: list | None = None):
    rng = random.Random(0)

    async def sample(case_id: str, side: str, n: int) -> list[float]:
        if calls is not None:
            calls.append((case_id, side, n))
        p = (parent if side == "parent" else candidate)[case_id]
        return [float(rng.random() < p) for _ in range(n)]

    return sample


def gain_input(**kwargs) -> GateInput:
    parent_runs = {cid: [0.0, 1.0, 0.0] for cid in IDS}
    parent = result(dict.fromkeys(IDS, False), tokens=kwargs.pop("parent_tokens", 0))
    candidate = result(dict.fromkeys(IDS, True), tokens=kwargs.pop("tokens", 0))
    sampler = sampler_for(dict.fromkeys(IDS, 0.3), dict.fromkeys(IDS, 0.95), kwargs.pop("calls", None))
    return GateInput(
        parent=parent,
        candidate=candidate,
        baseline=parent,
        sampler=sampler,
        parent_runs=parent_runs,
        **kwargs,
    )


def test_registry_names():
    assert GATES.get("noisy") is PairedGate and GATES.get("paired") is PairedGate
    assert GATES.get("ratchet_strict") is RatchetGate and GATES.get("ratchet") is RatchetGate


async def test_real_gain_is_kept_with_a_logged_record():
    decision = await GATES.get("noisy")().decide(gain_input())
    assert decision.keep and decision.action == "keep"
    progress = decision.dimensions["progress"]
    assert progress.detail.startswith("better: effect +")
    record = json.loads(json.dumps(progress.numbers))
    assert record["decision"] == "better" and record["extra_candidate_runs"] > 0
    assert record["ci"][0] > 0 and record["runs"]["case-0"]["parent"] >= 3


async def test_noise_only_change_is_discarded():
    truth = {cid: 0.5 for cid in IDS}
    rng = random.Random(3)
    parent_runs = {cid: [float(rng.random() < 0.5) for _ in range(3)] for cid in IDS}
    verdicts = {cid: rng.random() < 0.5 for cid in IDS}
    data = GateInput(
        parent=result(verdicts),
        candidate=result({cid: not ok for cid, ok in verdicts.items()}),
        baseline=result(verdicts),
        sampler=sampler_for(truth, truth),
        parent_runs=parent_runs,
    )
    decision = await PairedGate().decide(data)
    assert not decision.keep
    assert any(reason.startswith("progress: ") for reason in decision.reasons)


async def test_ratchet_dimensions_are_kept():
    costly = await PairedGate().decide(gain_input(parent_tokens=100, tokens=250))
    assert not costly.keep and "tokens per case" in costly.dimensions["cost"].detail
    assert costly.dimensions["progress"].passed


async def test_structure_failure_skips_the_runs():
    calls: list = []
    critical = StaticReport(
        findings=[Finding(severity="critical", rule="secret", file="p.md", message="a key")]
    )
    decision = await PairedGate().decide(gain_input(candidate_static=critical, calls=calls))
    assert not decision.keep and calls == []
    assert not decision.dimensions["structure"].passed and not decision.dimensions["safety"].passed


async def test_deterministic_pass_to_fail_blocks_a_net_gain():
    ids = [*IDS, "fragile"]
    parent_p = {**dict.fromkeys(IDS, 0.3), "fragile": 1.0}
    cand_p = {**dict.fromkeys(IDS, 0.95), "fragile": 0.0}
    data = GateInput(
        parent=result({**dict.fromkeys(IDS, False), "fragile": True}),
        candidate=result({**dict.fromkeys(IDS, True), "fragile": False}),
        baseline=result(dict.fromkeys(ids, False)),
        sampler=sampler_for(parent_p, cand_p),
        parent_runs={**{cid: [0.0, 1.0, 0.0] for cid in IDS}, "fragile": [1.0, 1.0, 1.0]},
    )
    decision = await PairedGate().decide(data)
    assert not decision.keep
    assert decision.dimensions["regression"].numbers["regressed"] == ["fragile"]


async def test_without_extra_it_judges_the_single_runs():
    parent = result({"a": True, "b": False, "c": False})
    decision = await PairedGate().decide(
        GateInput(parent=parent, candidate=result({"a": False, "b": True, "c": True}), baseline=parent)
    )
    assert not decision.keep
    assert decision.dimensions["regression"].numbers["regressed"] == ["a"]
    assert decision.dimensions["progress"].numbers["extra_candidate_runs"] == 0


async def test_a_test_on_a_subset_says_so():
    unfixable = frozenset(IDS[:4])
    decision = await PairedGate().decide(gain_input(unfixable=unfixable))
    assert (
        "on the 12 dev cases not yet marked unfixable (4 left out)" in decision.dimensions["progress"].detail
    )
    assert (
        "not yet marked unfixable"
        not in (await PairedGate().decide(gain_input())).dimensions["progress"].detail
    )
