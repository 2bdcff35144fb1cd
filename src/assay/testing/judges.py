"""The pairwise judge suite: :func:`check_judge`, which every registered judge passes and a judge of one's own
can run. Its contestants have one file, ``main.py``: the strong one's says ``better`` and passes every case,
the weak one's says ``worse`` and fails them all."""

from __future__ import annotations

from collections.abc import Callable

from assay.evaluation.evaluator import EvalResult
from assay.extensions import PAIRWISE_JUDGE
from assay.model import CaseResult, Output, Split
from assay.protocols import PairwiseJudgeProtocol
from assay.testing._expect import conformed, expect, one_line
from assay.tournament import Contestant, PairVerdict, PairwiseJudge
from assay.tournament.judges import TIE


def contestant(id: str, text: str, *scores: float) -> Contestant:
    """A contestant whose ``main.py`` is ``text``, with these scores on dev cases ``c0``, ``c1``, ..."""
    cases = [
        CaseResult(id=f"c{i}", split=Split.DEV, passed=s >= 0.5, score=s, output=Output())
        for i, s in enumerate(scores)
    ]
    return Contestant(id, {"main.py": text}, EvalResult(cases=cases))


def strong() -> Contestant:
    return contestant("strong", "print('better')\n", 1, 1, 1, 1)


def weak() -> Contestant:
    return contestant("weak", "print('worse')\n", 0, 0, 0, 0)


def twin() -> Contestant:
    """The weak contestant under another id."""
    return contestant("twin", "print('worse')\n", 0, 0, 0, 0)


async def verdict(
    judge: PairwiseJudge, a: Contestant, b: Contestant, round: int = 0, who: str = "judge"
) -> PairVerdict:
    """One verdict, checked: a PairVerdict naming ``a``, ``b`` or nobody, with a one-line reason, votes for
    ``a``, ``b`` or a tie, and no negative count of calls, tokens or cost."""
    found = await judge.compare(a, b, round=round)
    expect(
        isinstance(found, PairVerdict), f"{who}: compare returned {type(found).__name__}, not a PairVerdict"
    )
    expect(
        found.winner in (a.id, b.id, None), f"{who}: the winner {found.winner!r} is neither {a.id} nor {b.id}"
    )
    expect(one_line(found.reason), f"{who}: the reason is empty or not one line: {found.reason!r}")
    expect(
        all(vote in (a.id, b.id, TIE) for vote in found.votes),
        f"{who}: a vote is neither {a.id}, {b.id} nor {TIE!r}: {found.votes}",
    )
    expect(
        found.calls >= 0 and found.tokens >= 0 and found.cost_usd >= 0,
        f"{who}: negative calls, tokens or cost: {found.calls}, {found.tokens}, {found.cost_usd}",
    )
    return found


async def check_judge(make: Callable[[], object]) -> None:
    """The pairwise judge contract, on a judge ``make()`` builds: verdicts of the right shape
    (:func:`verdict`), symmetric (the same winner whichever side is first, in rounds 0 to 2), a clearly better
    contestant wins, and two identical ones tie.

    A coroutine: ``await check_judge(MyJudge)``, or ``asyncio.run(...)`` outside an event loop. Raises
    AssertionError naming the part of the contract that failed."""
    raw = make()
    who = f"pairwise judge {type(raw).__name__}"
    expect(isinstance(raw, PairwiseJudgeProtocol), f"{who}: lacks async compare(a, b, *, round=0)")
    judge = conformed(PAIRWISE_JUDGE, raw, who)
    for round in range(3):
        forward = await verdict(judge, strong(), weak(), round, who)
        backward = await verdict(judge, weak(), strong(), round, who)
        expect(
            forward.winner == backward.winner == "strong",
            f"{who}: in round {round} the clearly better contestant did not win in both orders:"
            f" {forward.winner!r} ({forward.reason}), then {backward.winner!r} ({backward.reason})",
        )
    for a, b in ((weak(), twin()), (twin(), weak())):
        tie = await verdict(judge, a, b, 0, who)
        expect(
            tie.winner is None,
            f"{who}: two identical contestants did not tie: {tie.winner!r} won ({tie.reason})",
        )
