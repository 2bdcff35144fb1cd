"""One suite every registered pairwise judge must pass (a judge registered later joins it by its name: it is
built with no arguments, unless it is listed in ``BUILD``)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.extensions import PAIRWISE_JUDGE, resolve
from assay.llm.base import Completion
from assay.model import CaseResult, Output, Split
from assay.proposers.redaction import Redactor
from assay.protocols import PairwiseJudgeProtocol
from assay.tournament import JUDGES, Contestant, LLMPairJudge, PairVerdict, PairwiseJudge
from assay.tournament.judges import TIE

NAMES = JUDGES.names()


class Reader:
    """A fake chat model that prefers the candidate whose file says ``better`` (a tie when both or neither do)."""

    model = "fake:reader"

    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
    ) -> Completion:
        text = messages[-1]["content"]
        a, b = (re.search(f"=== Candidate {x} ===\n(.*?)(\n\n===|\n\nWhich)", text, re.S) for x in "AB")
        said = [m is not None and "better" in m.group(1) for m in (a, b)]
        winner = "A" if said == [True, False] else "B" if said == [False, True] else "TIE"
        return Completion(text=f"WINNER: {winner}\nREASON: it reads better", tokens_in=10, tokens_out=5)

    async def aclose(self) -> None:
        return None


BUILD: dict[str, Callable[[], PairwiseJudge]] = {
    "llm": lambda: LLMPairJudge(Reader(), "classify numbers", redactor=Redactor([])),
}


def contestant(id: str, text: str, *scores: float) -> Contestant:
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=s >= 0.5, score=s, output=Output())
        for i, s in enumerate(scores)
    ]
    return Contestant(id, {"main.py": text}, EvalResult(cases=cases))


def strong() -> Contestant:
    return contestant("strong", "print('better')\n", 1, 1, 1, 1)


def weak() -> Contestant:
    return contestant("weak", "print('worse')\n", 0, 0, 0, 0)


async def verdict(judge: PairwiseJudge, a: Contestant, b: Contestant, round: int = 0) -> PairVerdict:
    found = await judge.compare(a, b, round=round)
    assert isinstance(found, PairVerdict)
    assert found.winner in (a.id, b.id, None)
    assert found.reason and "\n" not in found.reason
    assert all(vote in (a.id, b.id, TIE) for vote in found.votes)
    assert found.calls >= 0 and found.tokens >= 0 and found.cost_usd >= 0
    return found


async def check_judge(make: Callable[[], PairwiseJudge]) -> None:
    """The contract: verdicts are symmetric (the same winner whichever side is first, in every round), a clearly
    better contestant wins, and two identical ones tie."""
    judge = make()
    assert isinstance(judge, PairwiseJudgeProtocol)
    for round in range(3):
        forward = await verdict(judge, strong(), weak(), round)
        backward = await verdict(judge, weak(), strong(), round)
        assert forward.winner == backward.winner == "strong"
    twin = contestant("twin", "print('worse')\n", 0, 0, 0, 0)
    assert (await verdict(judge, weak(), twin)).winner is None
    assert (await verdict(judge, twin, weak())).winner is None


@pytest.mark.parametrize("name", NAMES)
async def test_registered_judge_conforms(name: str) -> None:
    await check_judge(BUILD.get(name, lambda: resolve(PAIRWISE_JUDGE, name)))


def test_every_judge_is_in_the_suite() -> None:
    assert {"scores", "llm"} <= set(NAMES)


class FirstCase(PairwiseJudge):
    """A dummy judge: the higher score on the first case both ran wins."""

    name = "first_case"

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        assert a.results is not None and b.results is not None
        x, y = a.results.cases[0].score, b.results.cases[0].score
        winner = a.id if x > y else b.id if y > x else None
        return PairVerdict(winner, f"{winner or TIE}: first case {x:g} vs {y:g}", [winner or TIE])


async def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JUDGES._items, "first_case", FirstCase)
    assert "first_case" in JUDGES.names()
    await check_judge(lambda: resolve(PAIRWISE_JUDGE, "first_case"))
