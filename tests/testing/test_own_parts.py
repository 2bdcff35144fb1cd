"""Parts of a user's own, of no class of assay's, each passing its family's suite from :mod:`assay.testing`
(the run store's suite takes database URLs, not a class: tests/history/test_store.py runs it)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from assay.checks import CheckContext
from assay.gates import Dimension, GateDecision, GateInput
from assay.loop.state import RunView
from assay.model import Case, CheckResult, CheckSpec, Output
from assay.proposers import Proposal, ProposerView
from assay.proposers.mutate import Mutation
from assay.proposers.mutate.base import Operator
from assay.ratings import MatchOutcome, Rating, confidence
from assay.search import Archive, SearchError
from assay.testing import (
    check_check,
    check_executor,
    check_gate,
    check_judge,
    check_operator,
    check_parent_selector,
    check_proposer,
    check_rating_backend,
    check_runner,
    check_stop_rule,
)
from assay.tournament import Contestant, PairVerdict


class MeanGate:
    async def decide(self, data: GateInput) -> GateDecision:
        gain = data.candidate.mean_score - data.parent.mean_score
        return GateDecision(
            keep=gain > 0, dimensions={"mean": Dimension(passed=gain > 0, detail=f"{gain:+.3f}")}
        )


async def test_a_gate_of_ones_own() -> None:
    await check_gate(MeanGate)


class Uniform:
    def probabilities(self, archive: Archive) -> dict[str, float]:
        nodes = archive.nodes()
        if not nodes:
            raise SearchError("the archive is empty")
        evaluated = [n.id for n in nodes if n.accuracy is not None]
        return {n.id: 1 / len(evaluated) if n.id in evaluated else 0.0 for n in nodes}


def test_a_parent_selector_of_ones_own() -> None:
    check_parent_selector(Uniform, draws=5000)


class Raise:
    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        text = view.artifact["classify.py"]
        (worktree / "classify.py").write_text(text.replace("THRESHOLD = 5", f"THRESHOLD = {5 + view.layer}"))
        return Proposal(ok=True, description=f"THRESHOLD 5 -> {5 + view.layer}")


async def test_a_proposer_of_ones_own(tmp_path: Path) -> None:
    await check_proposer(Raise, tmp_path)


def wider(path: str, text: str, rng: object) -> Mutation | None:
    """Every ``LIMIT = n`` becomes ``LIMIT = n + 1``, wherever the file spells it so."""
    if "LIMIT = 10" not in text and "limit = 10" not in text:
        return None
    new = text.replace("LIMIT = 10", "LIMIT = 11").replace("limit = 10", "limit = 11")
    return Mutation(path, new, "LIMIT 10 -> 11", "my.wider", (f"{path}:LIMIT",))


def test_a_mutation_operator_of_ones_own() -> None:
    check_operator(Operator("my.wider", "python", 1, wider))


class MeanJudge:
    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        x, y = (c.results.mean_score if c.results else 0.0 for c in (a, b))
        winner = a.id if x > y else b.id if y > x else None
        return PairVerdict(winner, f"{winner or 'tie'}: {x:.2f} vs {y:.2f}", [winner or "tie"])


async def test_a_pairwise_judge_of_ones_own() -> None:
    await check_judge(MeanJudge)


class EveryOther:
    def check(self, run: Any) -> str | None:
        return "an even generation" if run.generation and run.generation % 2 == 0 else None


def test_a_stop_rule_of_ones_own() -> None:
    assert check_stop_rule(EveryOther) == [None, "an even generation"]  # a fresh run, a worn one (500)
    assert check_stop_rule(EveryOther, [RunView(generation=3)]) == [None]


class Echo:
    async def run(self, case: Case, workdir: Path) -> Output:
        return Output(text=str(case.input))


async def test_a_runner_of_ones_own(tmp_path: Path) -> None:
    await check_runner(Echo, tmp_path)


class EndsLikeExpected:
    def __init__(self, spec: CheckSpec) -> None:
        self.spec = spec

    async def run(self, output: Output, ctx: CheckContext) -> CheckResult:
        passed = output.text.endswith(str(ctx.case.expected)) != self.spec.negate
        return CheckResult(type=self.spec.label(), passed=passed, score=float(passed))


async def test_a_check_of_ones_own(tmp_path: Path) -> None:
    await check_check(EndsLikeExpected, CheckSpec(type="ends_like_expected"), tmp_path)


class WinShare:
    """1500 plus 400 times the share of wins over losses; the uncertainty shrinks with the comparisons."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}

    def update(self, outcomes: Sequence[MatchOutcome]) -> None:
        for o in outcomes:
            for name in (o.a, o.b):
                record = self.counts.setdefault(name, [0, 0, 0])
                record[0 if o.winner == name else 2 if o.winner is None else 1] += 1

    def rating(self, name: str) -> Rating:
        wins, losses, ties = self.counts.get(name, [0, 0, 0])
        n = wins + losses + ties
        value = 1500 + 400 * (wins - losses) / (n + 2)
        return Rating(name, value, 350 / math.sqrt(1 + n), wins, losses, ties, n, confidence(n))

    def ratings(self) -> dict[str, Rating]:
        return {name: self.rating(name) for name in self.counts}

    def win_probability(self, a: str, b: str) -> float:
        return 1 / (1 + 10 ** ((self.rating(b).rating - self.rating(a).rating) / 400))


def test_a_rating_backend_of_ones_own() -> None:
    check_rating_backend(WinShare)


class OneByOne:
    """One call at a time, in order."""

    async def map(
        self,
        fn: Callable[[Any], Awaitable[Any]],
        items: Sequence[Any],
        *,
        concurrency: int,
        on_result: Callable[[Any], None] | None = None,
    ) -> list[Any]:
        results = []
        for item in items:
            results.append(await fn(item))
            if on_result is not None:
                on_result(results[-1])
        return results


async def test_an_executor_of_ones_own() -> None:
    await check_executor(OneByOne)


def test_every_suite_is_shown_here() -> None:
    import assay.testing

    shown = {name for name in globals() if name.startswith("check_")}
    assert shown | {"check_run_store"} == set(assay.testing.__all__)
