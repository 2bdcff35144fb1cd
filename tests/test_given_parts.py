"""A part given through the Python API is the one used, whatever assay.yaml names for its family: for each family
(gate, search, proposer, pairwise judge, rating backend, stop rule, runner, check, executor) an object of no
assay class, counting its calls, is passed to :func:`assay.evaluate` or :func:`assay.evolve` under every
configuration value of that family, and the run shows it was called and its answers were the ones that counted.
An object that lacks a required member is refused in one line before anything runs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.checks import CHECKS
from assay.config import PROPOSER_TYPES, AssayConfig, load_config
from assay.errors import ConfigError
from assay.evaluation.executor import LocalExecutor
from assay.gates import GATES, GateDecision, GateInput
from assay.model import Case, CheckResult, Output
from assay.presets import PRESETS
from assay.proposers import MutateProposer, Proposal, ProposerView
from assay.ratings import RATINGS, EloRating, MatchOutcome, Rating
from assay.runners import RUNNERS
from assay.search.base import SELECTORS
from assay.tournament import ScoresJudge
from assay.tournament.judges import Contestant, PairVerdict
from tests.checks.test_conformance import SPECS
from tests.fakes.inprocess_runner import InProcessRunner
from tests.loop.conftest import make_project

# -- parts of the user's own: no assay base class, each counting what it was asked -----------------------------


class KeepsAll:
    """A gate that keeps every candidate."""

    def __init__(self) -> None:
        self.calls = 0

    async def decide(self, data: GateInput) -> GateDecision:
        self.calls += 1
        return GateDecision(keep=True, dimensions={}, action="keep")


class NewestFirst:
    """A parent selector that always builds on the newest candidate."""

    def __init__(self) -> None:
        self.calls = 0

    def probabilities(self, archive: Any) -> dict[str, float]:
        self.calls += 1
        ids = [node.id for node in archive.nodes()]
        return {node: 1.0 if node == ids[-1] else 0.0 for node in ids}


class Proposes:
    """A proposer that hands the draw to the offline operators and counts it."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = MutateProposer()

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        self.calls += 1
        return await self.inner.propose(view, worktree, editable=editable)


class Compares:
    """A pairwise judge that asks the scores judge and counts the matches."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = ScoresJudge()

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        self.calls += 1
        return await self.inner.compare(a, b, round=round)


class Rates:
    """A rating backend that rates by Elo and counts the batches it was given."""

    def __init__(self) -> None:
        self.batches = 0
        self.inner = EloRating()

    def update(self, outcomes: Sequence[MatchOutcome]) -> None:
        self.batches += 1
        self.inner.update(outcomes)

    def rating(self, name: str) -> Rating:
        return self.inner.rating(name)

    def ratings(self) -> dict[str, Rating]:
        return self.inner.ratings()

    def win_probability(self, a: str, b: str) -> float:
        return self.inner.win_probability(a, b)


class StopsAtTwo:
    """A stop rule that ends the run after two generations."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, run: Any) -> str | None:
        self.calls += 1
        return "two is enough" if run.generation >= 2 else None


class Echoes:
    """A runner whose output is the case's input, upper-cased (so it is told from any configured runner's)."""

    def __init__(self) -> None:
        self.cases: list[str] = []

    async def run(self, case: Case, workdir: Path) -> Output:
        self.cases.append(case.id)
        return Output(text=str(case.input).upper(), duration_s=0.0)


class Judges:
    """A check whose verdict is whether the output holds ``YES``."""

    def __init__(self) -> None:
        self.outputs: list[str] = []

    async def run(self, output: Output, ctx: Any) -> CheckResult:
        self.outputs.append(output.text)
        return CheckResult(type="mine", passed="YES" in output.text, score=float("YES" in output.text))


class Maps:
    """An executor that runs the items in order, one at a time, counting the maps."""

    def __init__(self) -> None:
        self.items = 0

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
            self.items += 1
            result = await fn(item)
            if on_result is not None:
                on_result(result)
            results.append(result)
        return results


# -- evaluate: runners, checks and executors under every configured type --------------------------------------

RUNNER_SECTIONS = {
    "command": "{type: command, command: 'python never.py {input}'}",
    "python": "{type: python, function: 'never:run'}",
    "llm": "{type: llm, model: 'openai:never-called'}",
    "agent": "{type: agent, command: 'never-an-agent {input}'}",
    "local": "",  # (no runner of that type: the executors' names are listed below)
}


def eval_project(root: Path, *, runner: str = "command", checks: str = "", executor: str = "local") -> Path:
    root.mkdir(parents=True)
    (root / "prompt.txt").write_text("Answer yes.\n")
    (root / "cases.yaml").write_text(
        "cases:\n  - {id: a, input: say yes}\n  - {id: b, input: say no}\n  - {id: c, input: yes and no}\n"
    )
    checks = checks or "  - {type: contains, value: 'YES'}\n"
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.txt]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {RUNNER_SECTIONS[runner]}\n"
        f"executor: {{type: {executor}}}\n"
        f"checks:\n{checks}"
    )
    return root / "assay.yaml"


@pytest.mark.parametrize("kind", RUNNERS.names())
def test_a_runner_given_runs_every_case_whatever_runner_type_is_configured(tmp_path: Path, kind: str) -> None:
    mine = Echoes()
    result = assay.evaluate(eval_project(tmp_path / "p", runner=kind), runner=mine)
    assert sorted(mine.cases) == ["a", "b", "c"]
    assert {c.id: c.output.text for c in result.cases} == {"a": "SAY YES", "b": "SAY NO", "c": "YES AND NO"}
    assert {c.id: c.passed for c in result.cases} == {"a": True, "b": False, "c": True}


def check_line(kind: str) -> str:
    fields = {"type": kind, **SPECS.get(kind, {"value": "x"})}
    return f"  - {json.dumps(fields)}\n"


@pytest.mark.parametrize("kind", [n for n in CHECKS.names() if n != "similar"])
def test_a_check_given_judges_every_check_of_its_type(tmp_path: Path, kind: str) -> None:
    mine = Judges()
    config = eval_project(tmp_path / "p", checks=check_line(kind))
    result = assay.evaluate(config, runner=Echoes(), checks={kind: mine})
    assert sorted(mine.outputs) == ["SAY NO", "SAY YES", "YES AND NO"]  # the configured check never ran
    assert {c.id: c.passed for c in result.cases} == {"a": True, "b": False, "c": True}


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_an_executor_given_runs_the_evaluation_whatever_executor_is_configured(
    tmp_path: Path, kind: str
) -> None:
    mine = Maps()
    config = eval_project(tmp_path / "p", executor=kind)
    result = assay.evaluate(config, runner=Echoes(), executor=mine)
    assert mine.items == 3 and result.total == 3  # a ray executor would have needed a cluster


@pytest.mark.parametrize(
    ("part", "obj", "missing"),
    [("runner", object(), "run"), ("executor", LocalExecutor, "class"), ("executor", object(), "map")],
)
def test_evaluate_refuses_a_part_that_does_not_conform_in_one_line(
    tmp_path: Path, part: str, obj: object, missing: str
) -> None:
    with pytest.raises(ConfigError) as info:
        assay.evaluate(eval_project(tmp_path / "p"), **{part: obj})
    assert "\n" not in str(info.value) and missing in str(info.value)
    with pytest.raises(ConfigError, match="lacks run"):
        assay.evaluate(eval_project(tmp_path / "q"), checks={"contains": object()})


# -- evolve: gates, search, proposers, judges, ratings, stop rules and executors ------------------------------


def evolve_config(tmp_path: Path, section: str) -> AssayConfig:
    """The bin-packing project with ``section`` added to its assay.yaml (in-process runner)."""
    root = make_project(tmp_path / "p", cases=4, items=20, extra=textwrap.dedent(section))
    return load_config(root / "assay.yaml")


def evolve(config: AssayConfig, **parts: Any) -> assay.RunOutcome:
    return assay.evolve(config, max_generations=3, **parts)


@pytest.fixture
def inprocess_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process stand-in for the command runner (as tests/loop/conftest.py's fixture)."""
    monkeypatch.setitem(RUNNERS._items, "command", InProcessRunner)


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("name", GATES.names())
def test_a_gate_given_decides_whatever_gate_is_configured(tmp_path: Path, name: str) -> None:
    mine = KeepsAll()
    lines: list[str] = []
    evolve(evolve_config(tmp_path, f"evolve: {{gate: {name}}}\n"), gate=mine, report=lines.append)
    decided = [line for line in lines if line.startswith("gen ") and (" keep" in line or " discard" in line)]
    assert mine.calls >= 1 and len(decided) == mine.calls  # every decision was this gate's
    assert not [line for line in decided if " discard" in line]


PROPOSER_SECTIONS = {
    "mutate": "{type: mutate}",
    "tune": "{type: tune}",
    "llm": "{type: llm, llm: {model: 'openai:never-called'}}",
    "agent": "{type: agent, command: 'never-an-agent {view_file}'}",
}


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("name", PROPOSER_TYPES)
def test_a_proposer_given_proposes_whatever_proposer_is_configured(tmp_path: Path, name: str) -> None:
    mine = Proposes()
    config = evolve_config(tmp_path, f"evolve: {{proposer: {PROPOSER_SECTIONS[name]}}}\n")
    outcome = evolve(config, proposer=mine)
    assert mine.calls >= outcome.generations == 3  # no model or agent was asked (none is reachable here)


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("name", SELECTORS.names())
def test_a_parent_selector_given_chooses_whatever_search_is_configured(tmp_path: Path, name: str) -> None:
    mine = NewestFirst()
    evolve(evolve_config(tmp_path, f"evolve: {{search: {name}}}\n"), search=mine, gate=KeepsAll())
    assert mine.calls >= 2  # once per generation after the first


JUDGE_SECTIONS = {
    "scores": "evolve: {tournament: {judge: scores}}\n",
    "llm": "evolve: {tournament: {judge: llm, judge_llm: {model: 'openai:never-called'}}}\n",
    "l3_compare": "tiers: {l3_compare: true, l3_every: 1, l3_when_dev_above: 0}\n",
    "screening": (
        "evolve: {screening: judge, tournament: {judge: llm, judge_llm: {model: 'openai:never-called'}}}\n"
    ),
}


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize(("name", "section"), JUDGE_SECTIONS.items())
def test_a_pairwise_judge_given_plays_every_match(tmp_path: Path, name: str, section: str) -> None:
    mine = Compares()
    evolve(evolve_config(tmp_path, section), judge=mine, gate=KeepsAll())
    assert mine.calls >= 1


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("name", RATINGS.names())
def test_a_rating_backend_given_rates_the_tournament(tmp_path: Path, name: str) -> None:
    mine = Rates()
    section = f"evolve: {{tournament: {{rating: {name}}}}}\n"
    evolve(evolve_config(tmp_path, section), ratings=mine, gate=KeepsAll())
    assert mine.batches >= 1 and mine.inner.ratings()  # the matches were rated here


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_stop_rule_given_is_checked_under_every_preset(tmp_path: Path, preset: str) -> None:
    mine = StopsAtTwo()
    outcome = assay.evolve(evolve_config(tmp_path, ""), preset=preset, max_generations=5, stop_rules=[mine])
    assert outcome.stop_reason == "two is enough" and outcome.generations == 2 and mine.calls >= 2


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
@pytest.mark.parametrize("kind", ["local", "ray"])
def test_an_executor_given_runs_every_evaluation_of_a_run(tmp_path: Path, kind: str) -> None:
    mine = Maps()
    outcome = evolve(evolve_config(tmp_path, f"executor: {{type: {kind}}}\n"), executor=mine)
    assert outcome.generations == 3 and mine.items >= 4  # at least the baseline's four cases
