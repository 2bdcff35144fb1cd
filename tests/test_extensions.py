"""The resolver of extension points: names are built, conforming objects are used as given (with the base
class's defaults for what they lack), and anything else is refused in one line naming what is missing —
never replaced by the configured default."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.checks import Check, CheckContext
from assay.config import load_config
from assay.errors import ConfigError
from assay.evaluation.evaluator import EvalResult, Evaluator
from assay.extensions import (
    CHECK,
    FAMILIES,
    GATE,
    PAIRWISE_JUDGE,
    PARENT_SELECTOR,
    PROPOSER,
    RUNNER,
    STOP_RULE,
    ExtensionError,
    conform,
    resolve,
)
from assay.gates import Gate, GateDecision, GateInput
from assay.gates.ratchet import RatchetGate
from assay.loop.engine import Evolution
from assay.model import Case, CheckResult, CheckSpec, Output, Split
from assay.proposers import MutateProposer, Proposal
from assay.proposers.base import ProposerView
from assay.protocols import GateProtocol, ParentSelectorProtocol, ProposerProtocol
from assay.runners import RUNNERS
from assay.search import Archive, Node, RankedSelector
from assay.tournament import ScoresJudge
from tests.fakes.inprocess_runner import InProcessRunner
from tests.loop.conftest import make_project

EXAMPLES: dict[str, Any] = {
    "gate": RatchetGate(),
    "parent selector": RankedSelector(),
    "proposer": MutateProposer(),
    "pairwise judge": ScoresJudge(),
}


class DecideOnly:
    """A gate of the user's own: no base class, nothing but ``decide``."""

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self.calls = 0

    async def decide(self, data: GateInput) -> GateDecision:
        self.calls += 1
        return GateDecision(keep=self.keep, dimensions={}, action="keep" if self.keep else "discard")


class NoDecide:
    def judge(self, data: GateInput) -> bool:
        return True


def one_line(error: BaseException) -> str:
    text = str(error)
    assert text and "\n" not in text
    return text


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_takes_its_required_members_from_its_protocol(name: str) -> None:
    family = FAMILIES[name]
    members = {n for n in vars(family.protocol) if not n.startswith("_")}
    assert set(family.required()) == members and members
    assert not members & set(family.optional)
    if family.base is not None:
        abstract = set(getattr(family.base, "__abstractmethods__", ()))
        assert abstract <= members | {"evaluate"}  # a check's run is built from its evaluate


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_built_in_objects_satisfy_their_protocol_and_are_used_as_they_are(name: str) -> None:
    family, obj = FAMILIES[name], EXAMPLES[name]
    assert isinstance(obj, family.protocol)
    assert conform(family, obj) is obj


def test_a_gate_with_only_decide_is_used_as_given_with_the_defaults_it_lacks() -> None:
    mine = DecideOnly(keep=True)
    assert isinstance(mine, GateProtocol) and not isinstance(mine, Gate)
    gate = conform(GATE, mine)
    assert isinstance(gate, Gate)
    data = GateInput(
        parent=EvalResult(cases=[]), candidate=EvalResult(cases=[]), baseline=EvalResult(cases=[])
    )
    gate.restore({})
    decision = asyncio.run(gate.decide(data))
    assert decision.keep and mine.calls == 1
    assert gate.snapshot() == {} and gate.name == "DecideOnly"
    assert gate.keep is True  # anything else is the object's own
    assert "DecideOnly" in repr(gate)


class EndsInX:
    """A check of the user's own: no base class, nothing but ``run``."""

    async def run(self, output: Output, ctx: CheckContext) -> CheckResult:
        return CheckResult(type="ends_in_x", passed=output.text.endswith("x"), score=1.0)


def test_a_check_of_another_class_is_wrapped_and_judges_in_its_own_run() -> None:
    check = conform(CHECK, EndsInX())
    assert isinstance(check, Check) and not check.judged and check.name == "EndsInX"
    ctx = CheckContext(case=Case(id="c", input="say x"))
    assert asyncio.run(check.run(Output(text="x"), ctx)).passed
    assert not asyncio.run(check.evaluate(Output(text="y"), ctx)).passed  # the base's abstract one, filled


class Echoes:
    """A runner of the user's own: no base class, nothing but ``run``."""

    async def run(self, case: Case, workdir: Path) -> Output:
        return Output(text=str(case.input))


def test_a_runner_of_another_class_runs_an_evaluation_and_has_nothing_to_release(tmp_path: Path) -> None:
    runner = conform(RUNNER, Echoes())
    assert runner.sandbox is None and runner.default_concurrency() >= 1
    asyncio.run(runner.release(tmp_path))
    asyncio.run(runner.aclose())
    case = Case(id="c", input="x", checks=[CheckSpec(type="equals", value="x")])
    result = asyncio.run(Evaluator(runner).run([(case, Split.DEV)], tmp_path))  # releases the workdir after
    assert result.passed == 1 and result.cases[0].output.text == "x"


def test_a_gate_without_decide_is_refused_in_one_line_naming_decide() -> None:
    with pytest.raises(ExtensionError) as info:
        conform(GATE, NoDecide())
    assert one_line(info.value) == (
        "gate NoDecide lacks decide: a gate has async def decide(data) -> GateDecision"
    )
    assert isinstance(info.value, ConfigError) and isinstance(info.value, TypeError)


def test_every_missing_method_is_named() -> None:
    with pytest.raises(
        ExtensionError, match=r"^proposer object lacks propose: a proposer has async def propose"
    ):
        conform(PROPOSER, object())
    with pytest.raises(ExtensionError, match=r"lacks probabilities: .* def probabilities\(archive\)"):
        conform(PARENT_SELECTOR, object())
    with pytest.raises(ExtensionError, match=r"lacks compare: .*async def compare\(a, b, \*, round=0\)"):
        conform(PAIRWISE_JUDGE, object())
    with pytest.raises(ExtensionError, match=r"lacks check: a stop rule has def check\(run\)"):
        conform(STOP_RULE, object())


class SyncDecide:
    def decide(self, data: GateInput) -> GateDecision:
        return GateDecision(keep=True, dimensions={})


class AsyncCheck:
    async def check(self, run: object) -> str | None:
        return None


class AsyncSnapshot(DecideOnly):
    async def snapshot(self) -> dict[str, Any]:
        return {}


class NotCallable:
    decide = "yes"


@pytest.mark.parametrize(
    ("family", "obj", "message"),
    [
        (GATE, SyncDecide(), "gate SyncDecide: decide must be `async def` (the loop awaits it)"),
        (
            STOP_RULE,
            AsyncCheck(),
            "stop rule AsyncCheck: check must be a plain `def` (the loop does not await it)",
        ),
        (
            GATE,
            AsyncSnapshot(),
            "gate AsyncSnapshot: snapshot must be a plain `def` (the loop does not await it)",
        ),
        (GATE, NotCallable(), "gate NotCallable: decide is not callable (str)"),
        (GATE, DecideOnly, "gate DecideOnly is a class: give an instance, DecideOnly(...)"),
        (PROPOSER, "llm", "a proposer here is an object, not a name ('llm')"),
    ],
)
def test_members_of_the_wrong_kind_are_refused(family: Any, obj: object, message: str) -> None:
    with pytest.raises(ExtensionError) as info:
        conform(family, obj)
    assert one_line(info.value) == message


def test_an_instance_that_replaces_a_member_is_checked_though_its_class_conformed() -> None:
    # Conformance is remembered per class (thousands of checks are bound per evaluation), but only for
    # instances whose members are their class's.
    assert conform(GATE, DecideOnly()).keep is False
    changed = DecideOnly()
    changed.decide = lambda data: None  # type: ignore[method-assign,assignment,return-value]
    with pytest.raises(ExtensionError) as info:
        conform(GATE, changed)
    assert one_line(info.value) == "gate DecideOnly: decide must be `async def` (the loop awaits it)"
    assert conform(GATE, DecideOnly(keep=True)).keep is True


class Threshold:
    """A proposer of the user's own: no base class, no name, no redraws, no tidying; it reads the view."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.unsandboxed = "a reason"

    async def propose(self, view: Any, worktree: Path, *, editable: list[str]) -> Proposal:
        self.seen.append(view.generation)
        return Proposal(ok=False, description="", error="nothing")


def test_a_proposer_gets_defaults_and_sees_what_the_view_says() -> None:
    mine = Threshold()
    assert isinstance(mine, ProposerProtocol)
    proposer = conform(PROPOSER, mine)
    view = ProposerView(artifact={}, layer=1, generation=7)
    asyncio.run(proposer.propose(view, Path("."), editable=[]))
    assert mine.seen == [7]
    assert not proposer.tidies(view)
    tidied = asyncio.run(proposer.tidy(view, Path("."), editable=[]))
    assert not tidied.ok and tidied.exhausted
    assert (proposer.name, proposer.redraws) == ("Threshold", 2)
    assert getattr(proposer, "unsandboxed", None) == "a reason"
    asyncio.run(proposer.aclose())


class Probabilities:
    def probabilities(self, archive: Archive) -> dict[str, float]:
        return {node.id: 1.0 if node.id == "b" else 0.0 for node in archive.nodes()}


def test_a_selector_with_only_probabilities_chooses_by_them() -> None:
    assert isinstance(Probabilities(), ParentSelectorProtocol)
    selector = conform(PARENT_SELECTOR, Probabilities())
    archive = Archive([Node("a", None, 0.5), Node("b", "a", 0.2)])
    assert {selector.choose(archive, random.Random(seed)) for seed in range(20)} == {"b"}


def test_names_are_built_as_their_factories_build_them() -> None:
    assert type(resolve(GATE, "ratchet_strict")) is RatchetGate
    assert resolve(GATE, "backpressure", {"min_delta": 0.01}).min_delta == 0.01  # type: ignore[attr-defined]
    selector = resolve(PARENT_SELECTOR, "ranked", alpha=2.0)
    assert isinstance(selector, RankedSelector) and selector.alpha == 2.0
    assert resolve(PAIRWISE_JUDGE, "scores").name == "scores"
    mine = DecideOnly()
    assert resolve(GATE, mine).decide == mine.decide


def test_an_unknown_name_lists_the_known_ones_and_objects_take_no_options() -> None:
    with pytest.raises(ExtensionError) as info:
        resolve(PARENT_SELECTOR, "annealing")
    assert one_line(info.value) == "unknown parent selector 'annealing'; known: dgm, greedy, ranked, sift"
    with pytest.raises(ExtensionError, match="unknown runner type 'ssh'"):
        resolve(RUNNER, "ssh")
    with pytest.raises(ExtensionError, match=r"stop rule .plateau. cannot be built so: .*generations"):
        resolve(STOP_RULE, "plateau")
    assert resolve(STOP_RULE, "plateau", generations=5).generations == 5  # type: ignore[attr-defined]
    with pytest.raises(ExtensionError, match="options are for a gate given by name"):
        resolve(GATE, DecideOnly(), {"min_delta": 0.1})


def project_without_git(root: Path) -> Path:
    root.mkdir()
    (root / "cases.yaml").write_text(
        "cases:\n  - {id: a, input: '1', checks: [{type: equals, value: '1'}]}\n"
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [echo.py], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python echo.py {input}', timeout: 10}\n"
    )
    (root / "echo.py").write_text("import sys\nprint(sys.argv[1])\n")
    return root / "assay.yaml"


@pytest.mark.parametrize(
    ("part", "obj", "missing"),
    [
        ("gate", NoDecide(), "decide"),
        ("search", object(), "probabilities"),
        ("proposer", object(), "propose"),
        ("judge", object(), "compare"),
    ],
)
def test_evolve_refuses_a_part_that_does_not_conform_before_anything_runs(
    tmp_path: Path, part: str, obj: object, missing: str
) -> None:
    config = load_config(project_without_git(tmp_path / "p"))
    with pytest.raises(ExtensionError, match=f"lacks {missing}:"):
        Evolution(config, **{part: obj})
    with pytest.raises(ExtensionError, match=f"lacks {missing}:"):
        assay.evolve(config, **{part: obj})
    with pytest.raises(ExtensionError, match="stop rule object lacks check"):
        assay.evolve(config, stop_rules=[object()])  # type: ignore[list-item]


class Refuses:
    """A gate of the user's own that refuses everything, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def decide(self, data: GateInput) -> GateDecision:
        self.calls += 1
        return GateDecision(keep=False, dimensions={}, action="discard")


class Broken:
    async def decide(self, data: GateInput) -> GateDecision:
        raise RuntimeError("this gate is broken")


@pytest.mark.e2e
@pytest.mark.usefixtures("inprocess_runner")
def test_a_gate_object_without_a_base_class_decides_the_run(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", cases=5, items=20)
    gate = Refuses()
    outcome = assay.evolve(root / "assay.yaml", gate=gate, max_generations=3)
    assert outcome.generations == 3 and gate.calls >= 1
    assert outcome.best.candidate_id == outcome.baseline.candidate_id  # it kept nothing
    # Before, a gate object that was not a Gate was replaced by the ratchet: this one would have run 3 generations.
    with pytest.raises(RuntimeError, match="this gate is broken"):
        assay.evolve(root / "assay.yaml", gate=Broken(), max_generations=3)


@pytest.fixture
def inprocess_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process stand-in for the command runner (as tests/loop/conftest.py's fixture)."""
    monkeypatch.setitem(RUNNERS._items, "command", InProcessRunner)
