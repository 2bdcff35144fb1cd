"""Every registered proposer that works offline passes the proposer suite
(:func:`assay.testing.proposers.check_proposer`), built as the loop builds it (``resolve(PROPOSER, name)``:
``from_config(None)``, the defaults; a proposer registered later joins it by its name). Those that need a model
or an agent CLI run the suite in their own files, named here."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.extensions import PROPOSER, resolve
from assay.proposers import PROPOSERS, OfflineProposer, Proposal, Proposer, ProposerView
from assay.testing.proposers import check_proposer

NAMES = PROPOSERS.names()
NEEDS = {
    "llm": "needs a chat model (tests/proposers/test_llm.py runs the suite against the scripted server)",
    "agent": "needs an agent CLI (tests/proposers/test_agent.py runs the suite on a fake one, e2e layer)",
}


@pytest.mark.parametrize("name", NAMES)
async def test_registered_proposer_conforms(name: str, tmp_path: Path) -> None:
    if name in NEEDS:
        pytest.skip(NEEDS[name])
    await check_proposer(lambda: resolve(PROPOSER, name), tmp_path)


def test_every_proposer_is_in_the_suite() -> None:
    assert {"mutate", "tune"} <= set(NAMES) - set(NEEDS)
    assert set(NEEDS) <= set(NAMES)
    assert type(resolve(PROPOSER, "mutate")) is OfflineProposer  # the offline default, with its defaults


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
    await check_proposer(lambda: resolve(PROPOSER, "lower"), tmp_path)


class Restless(Lower):
    """Proposes a different change on every call, whatever the generation: a resumed run would drift."""

    calls = 0

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        Restless.calls += 1
        (worktree / "classify.py").write_text(view.artifact["classify.py"] + f"# {Restless.calls}\n")
        return Proposal(ok=True, description=f"call {Restless.calls}")


class Raises(Lower):
    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        raise RuntimeError("the model is down")


@pytest.mark.parametrize(
    ("proposer", "words"),
    [
        (Restless, "a fresh proposer proposes otherwise for the same generation and view"),
        (Raises, r"propose raised RuntimeError: the model is down \(a failure is Proposal\(ok=False"),
    ],
)
async def test_the_suite_names_what_a_broken_proposer_breaks(
    proposer: type, words: str, tmp_path: Path
) -> None:
    with pytest.raises(AssertionError, match=words):
        await check_proposer(proposer, tmp_path)
