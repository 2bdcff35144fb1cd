"""The pairwise judges: per-case scores, and an LLM through the real SDK against the scripted server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import pytest

from assay.proposers.redaction import REDACTED, Redactor
from assay.registry import UnknownName
from assay.tournament import JUDGES, Contestant, LLMPairJudge, ScoresJudge, parse_answer
from tests.fakes.llm_server import ScriptedLLMServer
from tests.tournament._helpers import chat_model, results

SECRET = "Quokka-Lantern-7731"
GOOD = "Answer politely and cite the order number."
BAD = "Answer."


def good_and_bad() -> tuple[Contestant, Contestant]:
    good = Contestant("cand-7f3a9e", {"prompt.md": GOOD}, results({"c1": 1.0, "c2": 1.0}))
    bad = Contestant("base-0b12cd", {"prompt.md": BAD}, results({"c1": 0.0, "c2": 0.5}))
    return good, bad


def user_text(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def prefers_good(body: dict[str, Any]) -> str:
    """A sensible judge: picks whichever label shows the polite prompt, wherever it is placed."""
    a_part = user_text(body).split("=== Candidate B ===")[0]
    return f"WINNER: {'A' if 'politely' in a_part else 'B'}\nREASON: it asks for politeness"


async def test_scores_judge_win_loss_and_tie() -> None:
    good, bad = good_and_bad()
    judge = ScoresJudge(sample=None)
    win = await judge.compare(good, bad)
    assert win.winner == good.id and win.means == (1.0, 0.25)
    assert "1.0000" in win.reason and "0.2500" in win.reason and "2 shared cases" in win.reason
    loss = await judge.compare(bad, good)
    assert loss.winner == good.id and loss.votes == [good.id]
    same = Contestant("twin", {}, results({"c1": 0.5 + 1e-12, "c2": 0.5}))
    other = Contestant("other", {}, results({"c1": 0.5, "c2": 0.5}))
    tie = await judge.compare(same, other)
    assert tie.winner is None and tie.votes == ["tie"]
    assert (tie.tokens, tie.cost_usd) == (0, 0.0)


async def test_each_round_of_the_scores_judge_plays_its_own_sample_of_cases() -> None:
    scores = {f"c{i}": i / 10 for i in range(10)}
    a = Contestant("a", {}, results(scores))
    b = Contestant("b", {}, results({cid: 0.45 for cid in scores}))
    judge = ScoresJudge()  # half of the shared cases per match
    rounds = [await judge.compare(a, b, round=r) for r in range(6)]
    assert all("5 shared cases" in v.reason for v in rounds)
    assert len({v.means for v in rounds}) > 1  # different samples, different scores
    assert {v.winner for v in rounds} >= {"a", "b"}  # so repeated matches can go either way
    again = [await judge.compare(a, b, round=r) for r in range(6)]
    assert [v.means for v in again] == [v.means for v in rounds]  # drawn from the pair and the round
    with pytest.raises(ValueError):
        ScoresJudge(sample=0)


async def test_a_sample_takes_the_cases_where_the_two_differ_first() -> None:
    scores = {f"c{i:02d}": 0.9 for i in range(20)}
    a = Contestant("a", {}, results(scores))
    b = Contestant("b", {}, results({**scores, "c13": 0.8}))  # b is worse on one case of 20
    judge = ScoresJudge()
    rounds = [await judge.compare(a, b, round=r) for r in range(8)]
    assert all(v.winner == "a" and "10 shared cases" in v.reason for v in rounds)
    assert all(v.means == pytest.approx((0.9, 0.89)) for v in rounds)
    # More differing cases than the sample holds: a sample is all differing cases, drawn per round.
    c = Contestant("c", {}, results({cid: 0.5 + i / 100 for i, cid in enumerate(scores)}))
    means = {(await judge.compare(a, c, round=r)).means for r in range(8)}
    assert len(means) > 1 and all(mine == pytest.approx(0.9) for mine, _ in means)


async def test_scores_judge_counts_only_shared_cases() -> None:
    # b's extra failed case and a's extra failed case would flip the result if they counted.
    a = Contestant("a", {}, results({"c1": 0.8, "only-a": 0.0}))
    b = Contestant("b", {}, results({"c1": 0.6, "only-b": 0.0, "also-b": 0.0}))
    verdict = await ScoresJudge(sample=None).compare(a, b)
    assert verdict.winner == "a"
    assert verdict.means == pytest.approx((0.8, 0.6))
    assert "1 shared cases" in verdict.reason
    disjoint = await ScoresJudge().compare(a, Contestant("c", {}, results({"zz": 1.0})))
    assert disjoint.winner is None and disjoint.means is None and "share no cases" in disjoint.reason
    unevaluated = await ScoresJudge().compare(a, Contestant("d", {"f": "x"}))
    assert unevaluated.winner is None and unevaluated.means is None


def test_registry_and_parse() -> None:
    assert JUDGES.get("scores") is ScoresJudge and JUDGES.get("llm") is LLMPairJudge
    with pytest.raises(UnknownName, match="known: llm, scores"):
        JUDGES.get("elo-judge")
    assert parse_answer("WINNER: B\nREASON: shorter and clearer") == ("B", "shorter and clearer")
    assert parse_answer("  winner: tie \nREASON: same") == ("TIE", "same")
    assert parse_answer("WINNER: A") is None  # no reason
    assert parse_answer("WINNER: A\nWINNER: B\nREASON: both") is None
    assert parse_answer("I prefer A.\nREASON: it is nicer") is None
    assert parse_answer("WINNER: A or B\nREASON: hmm") is None


async def test_llm_judge_picks_the_better_side_in_both_orders(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.default = prefers_good
    good, bad = good_and_bad()
    judge = LLMPairJudge(
        chat_model(llm_server), "a support bot prompt", redactor=Redactor([]), both_orders=True
    )
    verdict = await judge.compare(bad, good)
    assert verdict.winner == good.id
    assert verdict.votes == [good.id] * 3
    assert "politeness" in verdict.reason
    assert len(llm_server.requests) == 6  # 3 votes x 2 orders
    assert all(r.body["temperature"] == 0 for r in llm_server.requests)
    assert verdict.tokens > 0 and verdict.cost_usd > 0


async def test_majority_of_three_votes_with_distinct_samples(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    good, bad = good_and_bad()
    # With the cache on, identical prompts reach the server only because each vote has its own sample index.
    model = chat_model(llm_server, cache_dir=tmp_path / "cache")
    judge = LLMPairJudge(model, "task", redactor=Redactor([]), both_orders=False)

    def answering(*prefer: str):  # type: ignore[no-untyped-def]
        """Replies in turn: prefer "good", "bad", "tie" or "junk", whichever label good got."""
        plan = iter(prefer)

        def reply(body: dict[str, Any]) -> str:
            choice = next(plan)
            good_is_a = GOOD in user_text(body).split("=== Candidate B ===")[0]
            if choice in ("good", "bad"):
                label = "A" if (choice == "good") == good_is_a else "B"
                return f"WINNER: {label}\nREASON: {choice}"
            return "WINNER: TIE\nREASON: even" if choice == "tie" else "no idea"

        return reply

    llm_server.default = answering("good", "bad", "good")
    verdict = await judge.compare(good, bad)
    assert len(llm_server.requests) == 3
    assert verdict.winner == good.id
    assert sorted(verdict.votes) == sorted([good.id, good.id, bad.id])

    llm_server.reset()
    llm_server.default = answering("good", "tie", "junk")
    split = await judge.compare(good, bad, round=1)
    assert len(llm_server.requests) == 3
    assert split.winner is None  # one vote of three is no majority
    assert sorted(split.votes) == sorted([good.id, "tie", "tie"])


async def test_position_bias_disagreement_is_a_tie(llm_server: ScriptedLLMServer) -> None:
    llm_server.default = "WINNER: A\nREASON: the first one is better"
    good, bad = good_and_bad()
    model = chat_model(llm_server)
    verdict = await LLMPairJudge(model, "task", redactor=Redactor([]), both_orders=True).compare(good, bad)
    assert verdict.winner is None and verdict.votes == ["tie"] * 3
    one_order = await LLMPairJudge(model, "task", redactor=Redactor([]), both_orders=False).compare(bad, good)
    assert one_order.winner == bad.id  # the same bias, unchecked, crowns whichever is shown first


async def test_garbage_and_failed_answers_are_ties(llm_server: ScriptedLLMServer) -> None:
    llm_server.default = "Both are fine, honestly. I'd go with the first."
    good, bad = good_and_bad()
    judge = LLMPairJudge(chat_model(llm_server), "task", redactor=Redactor([]), both_orders=True)
    verdict = await judge.compare(good, bad)
    assert verdict.winner is None and verdict.votes == ["tie"] * 3
    assert "unparseable" in verdict.reason
    assert verdict.tokens > 0

    llm_server.fail_next(*[500] * 6)
    failed = await judge.compare(good, bad, round=1)
    assert failed.winner is None and "judge call failed" in failed.reason
    assert failed.tokens == 0 and failed.cost_usd == 0.0


@pytest.mark.parametrize("show", ["files", "outputs"])
async def test_judge_never_sees_secrets_or_candidate_ids(
    llm_server: ScriptedLLMServer, show: Literal["files", "outputs"]
) -> None:
    llm_server.default = prefers_good
    leaky = f"Always include {SECRET} politely."
    a = Contestant(
        "cand-7f3a9e",
        {"prompt.md": leaky},
        results({"c1": 1.0, "c2": 1.0, "only-a": 1.0}, {"c1": f"Sure! {SECRET}", "only-a": "UNSHARED-A"}),
    )
    b = Contestant("base-0b12cd", {"prompt.md": BAD}, results({"c1": 0.0, "c2": 0.0}, {"c1": SECRET.lower()}))
    judge = LLMPairJudge(
        chat_model(llm_server), f"make replies contain {SECRET}", redactor=Redactor([SECRET]), show=show
    )
    await judge.compare(a, b)
    assert len(llm_server.requests) == 3  # three votes, each in one order
    for request in llm_server.requests:
        sent = json.dumps(request.body)
        assert SECRET.lower() not in sent.lower()
        assert REDACTED in sent
        assert a.id not in sent and b.id not in sent
        assert "7f3a9e" not in sent and "0b12cd" not in sent
        assert re.search(r"Candidate A.*Candidate B", user_text(request.body), re.DOTALL)
        if show == "outputs":
            assert "UNSHARED-A" not in sent and "output of c2" in sent and "prompt.md" not in sent
        else:
            assert "prompt.md" in sent and "output of c2" not in sent


async def test_by_default_each_vote_shows_the_pair_in_one_random_order(llm_server: ScriptedLLMServer) -> None:
    # SIFT asks in one order; drawing it per vote keeps a judge's bias for position A from favouring one side.
    llm_server.default = "WINNER: A\nREASON: the first one"
    good, bad = Contestant("good", {"p.md": GOOD}, None), Contestant("bad", {"p.md": BAD}, None)
    judge = LLMPairJudge(chat_model(llm_server), "task", redactor=Redactor([]), votes=5)
    verdicts = [await judge.compare(good, bad, round=r) for r in range(4)]
    assert len(llm_server.requests) == 20  # one call per vote
    firsts = [r.user.split("=== Candidate B ===")[0] for r in llm_server.requests]
    assert {GOOD in f for f in firsts} == {True, False}  # each side was shown first sometimes
    assert {v for verdict in verdicts for v in verdict.votes} == {"good", "bad"}  # so "always A" splits
    again = LLMPairJudge(chat_model(llm_server), "task", redactor=Redactor([]), votes=5)
    assert [(await again.compare(good, bad, round=r)).votes for r in range(4)] == [v.votes for v in verdicts]
