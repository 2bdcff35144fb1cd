"""Every registered pairwise judge passes the pairwise judge suite (:func:`assay.testing.judges.check_judge`),
built as the loop builds it (``resolve(PAIRWISE_JUDGE, name, config, redactor=...)``): the ``llm`` judge asks
the scripted server. A judge registered later joins the suite by its name."""

from __future__ import annotations

import re
from typing import Any

import pytest

from assay.config import AssayConfig
from assay.extensions import PAIRWISE_JUDGE, resolve
from assay.proposers.redaction import Redactor
from assay.testing.judges import check_judge
from assay.tournament import JUDGES, Contestant, PairVerdict, PairwiseJudge
from assay.tournament.judges import TIE
from tests.fakes.llm_server import ScriptedLLMServer

NAMES = JUDGES.names()


def reads_better(body: dict[str, Any]) -> str:
    """A model that prefers the candidate whose file says ``better`` (a tie when both or neither do)."""
    text = body["messages"][-1]["content"]
    a, b = (re.search(f"=== Candidate {x} ===\n(.*?)(\n\n===|\n\nWhich)", text, re.S) for x in "AB")
    said = [m is not None and "better" in m.group(1) for m in (a, b)]
    winner = "A" if said == [True, False] else "B" if said == [False, True] else "TIE"
    return f"WINNER: {winner}\nREASON: it reads better"


def config(server: ScriptedLLMServer) -> AssayConfig:
    judge = {"model": "openai:fake", "base_url": server.openai_url, "max_retries": 0}
    return AssayConfig.model_validate(
        {
            "artifact": {"kind": "code", "paths": ["main.py"]},
            "cases": {"files": ["cases.yaml"]},
            "runner": {"type": "command", "command": "python main.py"},
            "evolve": {"tournament": {"enabled": True, "judge_llm": judge}},
        }
    )


@pytest.mark.parametrize("name", NAMES)
async def test_registered_judge_conforms(name: str, llm_server: ScriptedLLMServer) -> None:
    llm_server.default = reads_better
    made = config(llm_server)
    await check_judge(lambda: resolve(PAIRWISE_JUDGE, name, made, redactor=Redactor([]), use_cache=False))
    assert bool(llm_server.requests) == (name == "llm")


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


class FirstSeen(FirstCase):
    """Always prefers the side shown first: not symmetric."""

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        return PairVerdict(a.id, f"{a.id}: shown first", [a.id])


async def test_the_suite_names_what_a_broken_judge_breaks() -> None:
    with pytest.raises(AssertionError, match=r"did not win in both orders: 'strong' .*, then 'weak'"):
        await check_judge(FirstSeen)
