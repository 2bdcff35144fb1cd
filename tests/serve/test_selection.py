"""Selection probabilities, the cost-aware score and the one-line reasoning."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from assay.serve.selection import Contender, choose, detail, probabilities, reasoning, score


def test_probabilities_follow_the_elo_scale_without_overflow() -> None:
    p = probabilities([1500.0, 1900.0])
    assert p == pytest.approx([1 / 11, 10 / 11])
    huge = probabilities([1e6, 1e6 - 400])
    assert huge == pytest.approx([10 / 11, 1 / 11]) and all(math.isfinite(x) for x in huge)
    assert probabilities([]) == []


def test_the_seed_formula_normalises_costs_between_the_cheapest_and_the_dearest() -> None:
    equal = [Contender(n, 1500.0, "global", c, 0) for n, c in (("a", 1.0), ("b", 2.0), ("c", 3.0))]
    seed = score(equal, cost_weight=1.0, scaling=1.0)
    assert [s.score for s in seed] == pytest.approx([2 / 3, 0.5, 1 / 3])
    relative = score(equal, cost_weight=1.0, scaling=1.0, formula="relative")
    assert [round(s.score, 3) for s in relative] == [0.556, 0.444, 0.333]
    # The router's defaults: scaling 0 ignores cost; equal costs change nothing whatever the weight.
    assert [s.score for s in score(equal, cost_weight=1.0)] == pytest.approx([1 / 3] * 3)
    same = [Contender(n, 1500.0 + i, "global", 5.0, 0) for i, n in enumerate("xyz")]
    assert [s.score for s in score(same, 2.0, 1.0)] == [s.probability for s in score(same)]


def test_cost_weight_favours_cheaper_variants_by_the_relative_formula() -> None:
    cheap = Contender("cheap", 1500.0, "global", 1.0, 10)
    dear = Contender("dear", 1520.0, "global", 4.0, 10)
    plain = score([cheap, dear])
    assert choose(plain).contender.name == "dear"
    adjusted = score([cheap, dear], cost_weight=0.5, scaling=1.0, formula="relative")
    assert adjusted[0].score == pytest.approx(plain[0].probability * (1 + (1 - 0.25) * 0.5))
    assert adjusted[1].score == pytest.approx(plain[1].probability)
    assert choose(adjusted).contender.name == "cheap"
    free = score([Contender("x", 1500, "start", 0, 0), Contender("y", 1500, "start", 0, 0)], 1.0, 1.0)
    assert choose(free).contender.name == "x"


def test_sampling_draws_in_proportion_to_the_scores() -> None:
    scored = score(
        [Contender("a", 1500, "global", 0, 0), Contender("b", 1500 + 400 * math.log10(3), "global", 0, 0)]
    )
    rng = random.Random(3)
    draws = Counter(choose(scored, "sample", rng).contender.name for _ in range(4000))
    assert draws["b"] / 4000 == pytest.approx(0.75, abs=0.03)


def test_reasoning_is_the_routers_line_and_detail_has_the_figures() -> None:
    scored = score([Contender("a", 1500, "global", 2, 3), Contender("b", 1568, "global", 1, 7)], 0.2, 1.0)
    assert reasoning(choose(scored), None, 20, 30) == "Selected based on Elo rating 1568.0 (win rate: 20/30)"
    assert reasoning(choose(scored), "math", 4, 7) == (
        "Category 'math': Selected based on Elo rating 1568.0 (win rate: 4/7)"
    )
    line = detail(choose(scored), 2, "math", 0.2, 5)
    assert line.startswith(
        "b chosen among 2 candidate(s) in category 'math': rating 1568.0, global rating used"
    )
    assert "7 comparison(s)" in line and "cost_weight 0.2" in line and "\n" not in line
