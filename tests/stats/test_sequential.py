import json
import random

import pytest

from assay.errors import ConfigError
from assay.stats import SequentialOptions, compare_sequential, majority_votes


class Recorder:
    """A sampler drawing runs from fixed pass probabilities per side, recording every call."""

    def __init__(self, parent: dict[str, float], candidate: dict[str, float], seed: int = 0) -> None:
        self.p = {"parent": parent, "candidate": candidate}
        self.rng = random.Random(seed)
        self.calls: list[tuple[str, str, int]] = []

    async def __call__(self, case_id: str, side: str, n: int) -> list[float]:
        self.calls.append((case_id, side, n))
        return [float(self.rng.random() < self.p[side][case_id]) for _ in range(n)]


def cases(n: int, prefix: str) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


async def test_deterministic_cases_cost_one_candidate_run():
    ids = cases(10, "pass") + cases(10, "fail")
    parent_runs = {cid: [1.0] * 3 if cid.startswith("pass") else [0.0] * 3 for cid in ids}
    truth = {cid: parent_runs[cid][0] for cid in ids}
    sampler = Recorder(truth, truth)
    result = await compare_sequential(parent_runs, sampler, options=SequentialOptions(probe_runs=1))
    assert result.decision == "undecided"
    assert all(len(result.candidate_runs[cid]) == 1 for cid in ids)
    assert result.extra_candidate_runs == 20 and result.extra_parent_runs == 0
    assert {side for _, side, _ in sampler.calls} == {"candidate"}


async def test_always_failing_cases_are_probed_with_matched_parent_runs():
    parent_runs = {cid: [0.0] * 3 for cid in cases(4, "f")}
    sampler = Recorder(dict.fromkeys(parent_runs, 0.0), dict.fromkeys(parent_runs, 0.0))
    result = await compare_sequential(parent_runs, sampler, options=SequentialOptions(probe_runs=3))
    assert all(len(runs) == 3 for runs in result.candidate_runs.values())
    assert all(len(runs) == 5 for runs in result.parent_runs.values())  # +2 parent runs with the +2 probes


async def test_clear_gain_stops_early_below_the_cap():
    ids = cases(16, "n")
    parent_runs = {cid: [0.0, 1.0, 0.0] for cid in ids}
    sampler = Recorder(dict.fromkeys(ids, 0.3), dict.fromkeys(ids, 1.0))
    result = await compare_sequential(parent_runs, sampler)
    assert result.decision == "better"
    assert result.looks < len(SequentialOptions().schedule())
    assert max(len(r) for r in result.candidate_runs.values()) < SequentialOptions().max_runs_per_case
    effect, low, high = result.effect
    assert 0 < low < effect < high and result.p_value < 0.01


async def test_clear_loss_is_worse():
    ids = cases(16, "n")
    parent_runs = {cid: [1.0, 1.0, 0.0] for cid in ids}
    sampler = Recorder(dict.fromkeys(ids, 0.7), dict.fromkeys(ids, 0.05))
    result = await compare_sequential(parent_runs, sampler)
    assert result.decision == "worse"


async def test_runs_never_exceed_the_cap_and_noise_stays_undecided():
    ids = cases(20, "n")
    probabilities = {cid: 0.5 for cid in ids}
    options = SequentialOptions(max_runs_per_case=4, futility_z=None)
    for seed in range(5):
        sampler = Recorder(probabilities, probabilities, seed=seed)
        parent_runs = {cid: [float(sampler.rng.random() < 0.5) for _ in range(3)] for cid in ids}
        result = await compare_sequential(parent_runs, sampler, options=options)
        assert max(len(r) for r in result.candidate_runs.values()) <= 4
        # Each later look adds as many parent runs as candidate runs: at most cap - min_runs new ones.
        assert max(len(r) for r in result.parent_runs.values()) <= 3 + 4 - 1
        total_new = sum(len(r) for r in result.candidate_runs.values())
        assert result.extra_candidate_runs == total_new
        assert result.decision != "better"


async def test_futility_stops_at_an_interim_look():
    ids = cases(16, "n")
    parent_runs = {cid: [1.0, 0.0, 1.0] for cid in ids}
    sampler = Recorder(dict.fromkeys(ids, 0.6), dict.fromkeys(ids, 0.45))
    with_futility = await compare_sequential(parent_runs, sampler, options=SequentialOptions(futility_z=0.5))
    assert with_futility.decision == "undecided" and with_futility.reason.startswith("futile")
    assert with_futility.looks < len(SequentialOptions().schedule())


async def test_pass_to_fail_is_confirmed_then_a_regression():
    ids = ["broken", *cases(6, "ok")]
    parent_runs = {cid: [1.0, 1.0, 1.0] for cid in ids}
    truth = dict.fromkeys(ids, 1.0)
    sampler = Recorder(truth, {**truth, "broken": 0.0})
    result = await compare_sequential(parent_runs, sampler)
    assert result.decision == "worse" and result.regressed == ["broken"]
    assert len(result.candidate_runs["broken"]) >= SequentialOptions().confirm_runs
    assert all(len(result.candidate_runs[cid]) == 1 for cid in ids[1:])


async def test_a_single_noisy_failure_is_not_a_regression():
    parent_runs = {"flaky": [1.0, 1.0, 1.0], "other": [1.0, 1.0, 1.0]}
    answers = iter([[0.0], [1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])

    async def sampler(case_id: str, side: str, n: int) -> list[float]:
        return next(answers)[:n] if case_id == "flaky" and side == "candidate" else [1.0] * n

    result = await compare_sequential(parent_runs, sampler, candidate_runs={"other": [1.0]})
    assert result.regressed == [] and result.decision == "undecided"


async def test_without_a_sampler_it_is_one_fixed_test_and_flips_count_at_once():
    parent_runs = {"a": [1.0], "b": [0.0], "c": [0.0]}
    result = await compare_sequential(parent_runs, candidate_runs={"a": [0.0], "b": [1.0], "c": [1.0]})
    assert result.looks == 1 and result.extra_runs == 0
    assert result.regressed == ["a"] and result.decision == "worse"


async def test_log_record_is_json():
    parent_runs = {"a": [1.0, 0.0, 1.0], "b": [0.0, 0.0, 0.0]}
    sampler = Recorder({"a": 0.6, "b": 0.0}, {"a": 0.9, "b": 0.5})
    record = json.loads(json.dumps((await compare_sequential(parent_runs, sampler)).to_dict()))
    assert {"decision", "effect", "ci", "p_better", "p_worse", "runs", "extra_candidate_runs"} <= set(record)
    assert record["runs"]["a"]["parent"] >= 3 and record["runs"]["b"]["candidate"] >= 1


async def test_false_keeps_stay_near_alpha_on_noise():
    rng = random.Random(7)
    kept = 0
    for trial in range(120):
        truth = {f"c{i}": rng.choice([0.02, 0.98]) if i < 12 else rng.uniform(0.2, 0.8) for i in range(30)}
        sampler = Recorder(truth, truth, seed=trial)
        parent_runs = {cid: [float(rng.random() < p) for _ in range(3)] for cid, p in truth.items()}
        kept += (await compare_sequential(parent_runs, sampler)).decision == "better"
    assert kept <= 12  # alpha 0.05: 6 expected; a broken test keeps far more


@pytest.mark.parametrize(
    ("votes", "verdict", "used"),
    [
        ([True, True], True, 2),
        ([False, False], False, 2),
        ([True, False, True], True, 3),
        ([False, True, False], False, 3),
    ],
)
async def test_majority_votes_stop_at_two_agreeing(votes, verdict, used):
    given = iter(votes)

    async def vote() -> bool:
        return next(given)

    assert await majority_votes(vote) == (verdict, used)


async def test_majority_of_five():
    given = iter([True, False, True, False, True])

    async def vote() -> bool:
        return next(given)

    assert await majority_votes(vote, max_votes=5) == (True, 5)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"alpha": 0.7}, "alpha"),
        ({"min_runs": 5, "max_runs_per_case": 3}, "min_runs"),
        ({"looks": (3, 2)}, "looks"),
        ({"looks": (3, 9)}, "looks"),
        ({"spending": "linear"}, "spending"),
    ],
)
def test_bad_options_fail_with_one_line(kwargs, field):
    with pytest.raises(ConfigError) as info:
        SequentialOptions(**kwargs)
    assert info.value.field == field and "\n" not in str(info.value)
