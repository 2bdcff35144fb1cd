"""One suite every registered proposer that works offline must pass (a proposer registered later joins it by
its name: it is built with no arguments). Those that need a model or an agent CLI are skipped here, with the
suite that runs them named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.extensions import PROPOSER, resolve
from assay.proposers import PROPOSERS, CaseFailure, DevCase, Proposal, Proposer, ProposerView
from assay.protocols import ProposerProtocol

NAMES = PROPOSERS.names()
NEEDS = {
    "llm": "needs a chat model (tests/proposers/test_llm.py runs it against the scripted server)",
    "agent": "needs an agent CLI (tests/proposers/test_agent.py runs a fake one)",
}
SOURCE = (
    "THRESHOLD = 5\n\n\ndef classify(x):\n    if x >= THRESHOLD:\n        return 'high'\n    return 'low'\n"
)


def view(layer: int, generation: int = 0) -> ProposerView:
    return ProposerView(
        artifact={"classify.py": SOURCE},
        layer=layer,
        generation=generation,
        dev_cases=[DevCase("n03", input="3"), DevCase("n09", input="9")],
        failures=[CaseFailure("n09", "the output differs from the expected one")],
    )


async def proposed(proposer: Proposer, worktree: Path, layer: int, generation: int) -> tuple[Proposal, str]:
    """One proposal in a fresh copy of the artifact at ``worktree``, and the file it leaves there."""
    worktree.mkdir(parents=True)
    (worktree / "classify.py").write_text(SOURCE)
    proposal = await proposer.propose(view(layer, generation), worktree, editable=["classify.py"])
    assert isinstance(proposal, Proposal)
    return proposal, (worktree / "classify.py").read_text()


async def check_proposer(name: str, tmp_path: Path) -> None:
    """The contract: a Proposal every time (a failure is ``ok=False`` with a one-line error, never an exception);
    a proposal that is ok changed the artifact and says how; the same proposer, generation and view give the
    same proposal (a resumed generation proposes the same change again); it has a name and closes."""
    proposer = resolve(PROPOSER, name)
    assert isinstance(proposer, ProposerProtocol) and proposer.name and proposer.redraws >= 1
    for layer in (1, 2):
        proposal, text = await proposed(proposer, tmp_path / f"first-{layer}", layer, generation=3)
        if proposal.ok:
            assert proposal.description and text != SOURCE
        else:
            assert proposal.error and "\n" not in proposal.error
        again, text_again = await proposed(resolve(PROPOSER, name), tmp_path / f"again-{layer}", layer, 3)
        assert (again.model_dump(), text_again) == (proposal.model_dump(), text)
    await proposer.aclose()


@pytest.mark.parametrize("name", NAMES)
async def test_registered_proposer_conforms(name: str, tmp_path: Path) -> None:
    if name in NEEDS:
        pytest.skip(NEEDS[name])
    await check_proposer(name, tmp_path)


def test_every_proposer_is_in_the_suite() -> None:
    assert {"mutate", "tune"} <= set(NAMES) - set(NEEDS)
    assert set(NEEDS) <= set(NAMES)


class Lower(Proposer):
    """A dummy proposer: lowers the first number it finds by one, or says there is none."""

    name = "lower"

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        text = view.artifact["classify.py"]
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        if not digits:
            return Proposal(ok=False, description="", error="no number to lower")
        at = digits[0]
        (worktree / "classify.py").write_text(f"{text[:at]}{int(text[at]) - 1}{text[at + 1 :]}")
        return Proposal(ok=True, description=f"lowered {text[at]} by one")


async def test_a_registered_dummy_joins_the_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(PROPOSERS._items, "lower", Lower)
    assert "lower" in PROPOSERS.names()
    await check_proposer("lower", tmp_path)
