import math
import random

import pytest

from assay.search import adaptive_next, top_k
from assay.search.opponents import NoisyBisection, boundary_pairs


def test_top_k_returns_the_best_first() -> None:
    incumbents = [(f"c{i}", (i * 7 % 12) / 12) for i in range(12)]
    best = top_k(incumbents)
    assert len(best) == 10
    strengths = dict(incumbents)
    assert [strengths[i] for i in best] == sorted(strengths.values(), reverse=True)[:10]
    assert top_k(incumbents, k=3) == ["c5", "c10", "c3"]


def test_top_k_edges() -> None:
    assert top_k([("a", 0.1), ("b", 0.5)], k=5) == ["b", "a"]
    assert top_k([("a", 0.1)], k=0) == []
    assert top_k([("a", 0.5), ("b", 0.5)], k=1) == ["a"]


def test_adaptive_next_picks_the_closest_not_asked() -> None:
    incumbents = [("a", 0.1), ("b", 0.4), ("c", 0.55), ("d", 0.9)]
    assert adaptive_next(0.5, incumbents, set()) == "c"
    assert adaptive_next(0.5, incumbents, {"c"}) == "b"
    assert adaptive_next(0.5, incumbents, {"a", "b", "c", "d"}) is None
    assert adaptive_next(0.5, [], set()) is None


def test_adaptive_next_ties_prefer_the_stronger() -> None:
    assert adaptive_next(0.5, [("low", 0.25), ("high", 0.75)], set()) == "high"


@pytest.mark.parametrize("position", range(33))
def test_converges_like_a_binary_search(position: int) -> None:
    # 32 incumbents at known strengths; the candidate truly belongs in gap ``position`` (0 = below all).
    strengths = [(i + 1) / 33 for i in range(32)]
    incumbents = [(f"c{i}", strengths[i]) for i in reversed(range(32))]
    true_strength = (position + 0.5) / 33
    lo, hi, asked = 0.0, 1.0, set[str]()
    while (opponent := adaptive_next((lo + hi) / 2, incumbents, asked)) is not None:
        if not any(lo < s < hi for s in strengths):
            break
        asked.add(opponent)
        opponent_strength = dict(incumbents)[opponent]
        assert lo < opponent_strength < hi  # never a question whose answer is already known
        if true_strength > opponent_strength:
            lo = opponent_strength
        else:
            hi = opponent_strength
    assert len(asked) <= math.ceil(math.log2(33))
    assert lo < true_strength < hi
    assert not any(lo < s < hi for s in strengths)


def test_bisection_asks_the_median_then_moves_with_each_answer() -> None:
    incumbents = [(f"c{i}", float(i)) for i in range(7)]  # slots 0..7
    bisection = NoisyBisection(incumbents, accuracy=0.8)
    assert bisection.next() == "c3"  # half the slots on each side
    bisection.observe("c3", newcomer_won=True)
    slots = bisection.slots()
    assert sum(slots) == pytest.approx(1.0)
    assert slots[4] / slots[3] == pytest.approx(0.8 / 0.2)  # above c3 is four times as likely as below
    assert dict(incumbents)[bisection.next() or ""] > 3.0


@pytest.mark.parametrize("position", range(17))
def test_bisection_with_a_perfect_judge_finds_the_slot(position: int) -> None:
    incumbents = [(f"c{i}", float(i)) for i in range(16)]
    bisection = NoisyBisection(incumbents, accuracy=0.99)
    for _ in range(math.ceil(math.log2(17)) + 1):
        opponent = bisection.next()
        assert opponent is not None
        bisection.observe(opponent, newcomer_won=position > dict(incumbents)[opponent])
    slots = bisection.slots()
    assert max(range(17), key=slots.__getitem__) == position


def test_bisection_recovers_the_slot_through_a_noisy_judge_with_repeats() -> None:
    rng = random.Random(7)
    incumbents = [(f"c{i}", float(i)) for i in range(20)]
    hits = 0
    for trial in range(60):
        position = trial % 21
        bisection = NoisyBisection(incumbents, accuracy=0.8)
        asked = []
        for _ in range(20):
            opponent = bisection.next()
            assert opponent is not None
            asked.append(opponent)
            truth = position > dict(incumbents)[opponent]
            bisection.observe(opponent, truth if rng.random() < 0.8 else not truth)
        slots = bisection.slots()
        hits += abs(max(range(21), key=slots.__getitem__) - position) <= 1
        assert len(set(asked)) < len(asked)  # it asks again where the answer is still in doubt
    assert hits >= 50


def test_bisection_trusts_answers_against_uncertain_incumbents_less() -> None:
    incumbents = [("a", 0.0), ("b", 1.0), ("c", 2.0)]
    sure = NoisyBisection(incumbents, accuracy=0.9)
    vague = NoisyBisection(incumbents, accuracy=0.9, uncertainty={"b": 5.0})
    for bisection in (sure, vague):
        bisection.observe("b", newcomer_won=True)
    assert sum(vague.slots()[2:]) < sum(sure.slots()[2:])
    assert sum(sure.slots()[2:]) == pytest.approx(0.9)


def test_bisection_ties_prefer_the_stronger() -> None:
    assert NoisyBisection([("high", 0.75), ("low", 0.25)], accuracy=0.8).next() == "high"
    assert NoisyBisection([("low", 0.25), ("high", 0.75)], accuracy=0.8).next() == "high"


def test_bisection_edges() -> None:
    assert NoisyBisection([], accuracy=0.7).next() is None
    assert NoisyBisection([], accuracy=0.7).slots() == [1.0]
    with pytest.raises(ValueError, match="accuracy"):
        NoisyBisection([("a", 0.0)], accuracy=0.5)


def test_boundary_pairs_target_the_doubtful_top_members() -> None:
    # a clear top 3, then two near-equal names fighting for the last top-5 place, then a clear tail
    values = {"t1": 10.0, "t2": 9.0, "t3": 8.0, "t4": 5.0, "x": 4.0, "y": 4.05, "z": 1.0, "w": 0.0}
    errors = dict.fromkeys(values, 0.3)
    incumbents = list(values.items())
    pairs = boundary_pairs(incumbents, errors, top=5, count=2, draws=512)
    assert len(pairs) == 2 and len(set(pairs)) == 2
    assert set(pairs[0]) == {"x", "y"}
    assert all({"x", "y"} & set(pair) for pair in pairs)
    assert boundary_pairs(incumbents, dict.fromkeys(values, 0.0), top=5, count=3) == []  # nothing in doubt
    assert boundary_pairs(incumbents[:1], errors) == []
