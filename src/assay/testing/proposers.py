"""The proposer suite: :func:`check_proposer`, which every registered proposer passes and a proposer of one's
own can run. Its artifact is one Python file (:data:`SOURCE`, ``classify.py``) unless another is given."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from assay.extensions import PROPOSER
from assay.proposers import CaseFailure, DevCase, Proposal, Proposer, ProposerView
from assay.protocols import ProposerProtocol
from assay.testing._expect import conformed, expect, one_line

SOURCE = (
    "THRESHOLD = 5\n\n\ndef classify(x):\n    if x >= THRESHOLD:\n        return 'high'\n    return 'low'\n"
)


def view(layer: int, generation: int = 0, artifact: Mapping[str, str] | None = None) -> ProposerView:
    """What a proposer is shown: the artifact, two dev cases, one of them failing."""
    return ProposerView(
        artifact=dict(artifact or {"classify.py": SOURCE}),
        layer=layer,
        generation=generation,
        dev_cases=[DevCase("n03", input="3"), DevCase("n09", input="9")],
        failures=[CaseFailure("n09", "the output differs from the expected one")],
    )


async def proposed(
    proposer: Proposer, worktree: Path, layer: int, generation: int, artifact: Mapping[str, str], who: str
) -> tuple[Proposal, dict[str, str]]:
    """One proposal in a fresh copy of the artifact at ``worktree``, and the files it leaves there."""
    worktree.mkdir(parents=True)
    for name, text in artifact.items():
        (worktree / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree / name).write_text(text)
    try:
        proposal = await proposer.propose(
            view(layer, generation, artifact), worktree, editable=list(artifact)
        )
    except Exception as exc:
        raise AssertionError(
            f"{who}: propose raised {type(exc).__name__}: {exc} (a failure is Proposal(ok=False, error=...))"
        ) from exc
    expect(
        isinstance(proposal, Proposal), f"{who}: propose returned {type(proposal).__name__}, not a Proposal"
    )
    return proposal, {name: (worktree / name).read_text() for name in artifact}


async def check_proposer(
    make: Callable[[], object], workdir: Path, *, artifact: Mapping[str, str] | None = None
) -> None:
    """The proposer contract, on proposers ``make()`` builds (a fresh one each call), in a new folder under
    ``workdir`` for each proposal: a Proposal every time (a failure is ``ok=False`` with a one-line error, never
    an exception); a proposal that is ok changed the artifact and says how; a fresh proposer given the same
    generation and view gives the same proposal and leaves the same files (a resumed generation proposes the
    same change again); it has a name, redraws at least once, and closes. Layers 1 and 2, at generation 3.

    ``artifact`` (path -> text; default ``classify.py``, :data:`SOURCE`) is what it edits, every file editable.
    A coroutine: ``await check_proposer(MyProposer, tmp_path)``, or ``asyncio.run(...)`` outside an event
    loop. Raises AssertionError naming the part of the contract that failed."""
    files = dict(artifact or {"classify.py": SOURCE})
    raw = make()
    who = f"proposer {type(raw).__name__}"
    expect(isinstance(raw, ProposerProtocol), f"{who}: lacks async propose(view, worktree, *, editable)")
    proposer = conformed(PROPOSER, raw, who)
    expect(proposer.name, f"{who}: has an empty name")
    expect(proposer.redraws >= 1, f"{who}: redraws is {proposer.redraws}, less than 1")
    for layer in (1, 2):
        proposal, text = await proposed(proposer, workdir / f"first-{layer}", layer, 3, files, who)
        if proposal.ok:
            expect(proposal.description, f"{who}: an ok proposal at layer {layer} has no description")
            expect(
                text != files,
                f"{who}: an ok proposal at layer {layer} changed no file ({proposal.description})",
            )
        else:
            expect(
                one_line(proposal.error),
                f"{who}: a failed proposal at layer {layer} needs a one-line error, not {proposal.error!r}",
            )
        fresh = conformed(PROPOSER, make(), who)
        again, text_again = await proposed(fresh, workdir / f"again-{layer}", layer, 3, files, who)
        expect(
            again.model_dump() == proposal.model_dump(),
            f"{who}: a fresh proposer proposes otherwise for the same generation and view (layer {layer}):"
            f" {again.model_dump()} vs {proposal.model_dump()}",
        )
        expect(
            text_again == text,
            f"{who}: a fresh proposer leaves other files for the same generation and view (layer {layer})",
        )
        await fresh.aclose()
    await proposer.aclose()
