import math

import pytest

from assay.search import adaptive_next, top_k


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
