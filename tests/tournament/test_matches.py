"""A generation's matches: seed 000's rules (a baseline match won above 0.55 on the candidate's own score, a
pool match by raw scores), the llm judge's winner, the self-play pool, and the outcomes a rating backend learns
from."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.proposers.redaction import Redactor
from assay.ratings import MatchOutcome, make_rating
from assay.tournament import (
    Contestant,
    LLMPairJudge,
    PairVerdict,
    ScoresJudge,
    baseline_outcome,
    clamp_score,
    effective_score,
    judged_outcome,
    outcome_for,
    play_generation,
    update_pool,
)
from tests.fakes.llm_server import ScriptedLLMServer
from tests.tournament._helpers import chat_model, results


def scored(name: str, mean: float) -> Contestant:
    return Contestant(name, {"prompt.md": name}, results({"c1": mean, "c2": mean}))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(1.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.5, 0.5, 0.5), (0.6, 0.5, 0.55), (3.0, 0.0, 1.0), (0.0, 3.0, 0.0)],
)
def test_clamp_score(a: float, b: float, expected: float) -> None:
    assert clamp_score(a, b) == pytest.approx(expected)


def test_effective_score_from_means_or_a_winner() -> None:
    assert effective_score(PairVerdict("x", "", means=(0.9, 0.3)), "x") == pytest.approx(0.8)
    assert effective_score(PairVerdict("x", ""), "x") == 1.0
    assert effective_score(PairVerdict("y", ""), "x") == 0.0
    assert effective_score(PairVerdict(None, ""), "x") == 0.5


@pytest.mark.parametrize(
    ("score", "winner"), [(0.55, "c"), (0.5499, None), (0.5, None), (0.4501, None), (0.45, "o"), (0.0, "o")]
)
def test_outcome_threshold(score: float, winner: str | None) -> None:
    assert outcome_for("c", "o", score, 0.55) == MatchOutcome("c", "o", winner)


@pytest.mark.parametrize(
    ("own", "winner"),
    [(0.5501, "c"), (0.55, "b"), (0.55 - 1e-12, "b"), (0.55 + 1e-12, "b"), (0.2, "b"), (1, "c")],
)
def test_a_baseline_match_is_won_when_the_own_score_exceeds_the_threshold_else_lost(
    own: float, winner: str
) -> None:
    assert baseline_outcome("c", "b", own, 0.55) == MatchOutcome("c", "b", winner)
    assert baseline_outcome("c", "b", own, 0.1).winner == "c"  # the threshold is the config's


@pytest.mark.parametrize(
    ("means", "winner", "baseline_winner"),
    [
        ((0.9, 0.3), "c", "c"),
        ((0.9, 0.95), "o", "c"),  # a pool loss, but above the threshold against the baseline
        ((0.7, 0.7), None, "c"),  # a pool tie; the baseline match has no ties
        ((0.4, 0.1), "c", "o"),  # a pool win, but not above the threshold
        ((0.5, 0.5), None, "o"),
    ],
)
def test_scores_verdicts_follow_seed_000s_rules(
    means: tuple[float, float], winner: str | None, baseline_winner: str
) -> None:
    judged = None if means[0] == means[1] else "c" if means[0] > means[1] else "o"
    verdict = PairVerdict(judged, "", means=means)
    assert judged_outcome(verdict, "c", "o", "pool", 0.55) == MatchOutcome("c", "o", winner)
    assert judged_outcome(verdict, "c", "o", "baseline", 0.55) == MatchOutcome("c", "o", baseline_winner)


@pytest.mark.parametrize("kind", ["baseline", "pool"])
def test_a_judge_without_scores_decides_by_its_winner_in_every_kind_of_match(kind: str) -> None:
    for judged in ("c", "o", None):
        outcome = judged_outcome(PairVerdict(judged, ""), "c", "o", kind, 0.55)  # type: ignore[arg-type]
        assert outcome == MatchOutcome("c", "o", judged)


@pytest.mark.parametrize(("mean", "rate"), [(0.6, 1.0), (0.56, 1.0), (0.55, 0.0), (0.5, 0.0), (0.95, 1.0)])
async def test_baseline_win_needs_an_own_score_above_055(mean: float, rate: float) -> None:
    # The baseline's own score does not count: 0.95 is above the candidate's, and still it loses above 0.55.
    played = await play_generation(
        scored("cand", mean), baseline=scored("base", 0.95), pool=[], judge=ScoresJudge()
    )
    assert len(played.matches) == 3 and played.baseline_win_rate == rate
    assert all(m.kind == "baseline" and m.opponent == "base" for m in played.matches)
    assert [m.won for m in played.matches] == [rate == 1.0] * 3  # every match a win or a loss, never a tie
    assert played.matches[0].score == pytest.approx(clamp_score(mean, 0.95))  # what a fed gate averages
    assert [o.winner for o in played.outcomes] == ["cand" if rate else "base"] * 3
    assert played.matches[0].reason.startswith(f"{'won' if rate else 'lost'}: own score {mean:.4f}")


async def test_pool_matches_and_ratings_move_the_right_way() -> None:
    baseline = scored("base", 0.5)
    pool = [scored("p1", 0.9), scored("p2", 0.3), scored("cand", 0.7), scored("base", 0.5)]
    played = await play_generation(
        scored("cand", 0.7), baseline=baseline, pool=pool, judge=ScoresJudge(), matches_per_generation=2
    )
    # The candidate itself and the baseline are not pool opponents.
    assert [(m.kind, m.opponent) for m in played.matches] == [
        ("baseline", "base"),
        ("baseline", "base"),
        ("pool", "p1"),
        ("pool", "p2"),
    ]
    assert [o.winner for o in played.outcomes] == ["cand", "cand", "p1", "cand"]
    assert [m.won for m in played.matches] == [True, True, False, True]
    assert played.baseline_win_rate == 1.0 and len(played.verdicts) == 4
    tied = await play_generation(
        scored("cand", 0.7), baseline=baseline, pool=[scored("twin", 0.7)], judge=ScoresJudge()
    )
    assert [(m.kind, m.won, m.outcome.winner) for m in tied.matches][-1] == ("pool", False, None)

    elo = make_rating("elo")
    elo.update(played.outcomes)
    ratings = {name: r.rating for name, r in elo.ratings().items()}
    assert ratings["base"] < 1500 and ratings["p2"] < 1500 < ratings["p1"]
    assert ratings["cand"] > 1500

    worse = await play_generation(scored("weak", 0.1), baseline=baseline, pool=[], judge=ScoresJudge())
    elo.update(worse.outcomes)
    assert elo.rating("weak").rating < 1500 and elo.rating("weak").losses == 3
    assert elo.rating("base").rating > ratings["base"]


async def test_llm_judge_matches_draw_fresh_samples_per_round(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.default = "WINNER: TIE\nREASON: equal"
    llm_server.add_rule("WINNER: A\nREASON: candidate first", user=r"Candidate A ===[^=]*cand text")
    llm_server.add_rule("WINNER: B\nREASON: candidate second", user=r"Candidate B ===[^=]*cand text")
    judge = LLMPairJudge(
        chat_model(llm_server, tmp_path / "cache"), "task", redactor=Redactor([]), votes=1, both_orders=True
    )
    cand = Contestant("cand", {"f.md": "cand text"})
    base = Contestant("base", {"f.md": "base text"})
    played = await play_generation(cand, baseline=base, pool=[Contestant("p1", {"f.md": "p1"})], judge=judge)
    # 3 baseline rounds + 1 pool match, 2 orders each; the cache would collapse repeated rounds otherwise.
    assert len(llm_server.requests) == 8
    assert played.baseline_win_rate == 1.0
    assert [m.score for m in played.matches] == [1.0, 1.0, 1.0, 1.0]
    assert played.tokens > 0 and played.cost_usd > 0


async def test_bad_generation_arguments() -> None:
    with pytest.raises(ValueError, match="same"):
        await play_generation(scored("x", 1), baseline=scored("x", 0), pool=[], judge=ScoresJudge())


def test_update_pool_keeps_the_top_k() -> None:
    pool = {"a": 1600.0, "b": 1550.0, "c": 1500.0}
    assert update_pool(pool, "d", 1575.0) == {"a": 1600.0, "d": 1575.0, "b": 1550.0}
    assert list(update_pool(pool, "d", 1575.0)) == ["a", "d", "b"]
    assert update_pool(pool, "d", 1400.0) == pool
    assert update_pool(pool, "d", 1500.0) == pool  # on equal ratings the incumbent stays
    assert update_pool(pool, "a", 1450.0) == {"b": 1550.0, "c": 1500.0, "a": 1450.0}
    assert update_pool({}, "a", 1500.0, k=3) == {"a": 1500.0}
    assert update_pool(pool, "d", 2000.0, k=1) == {"d": 2000.0}
    assert pool == {"a": 1600.0, "b": 1550.0, "c": 1500.0}  # not mutated
