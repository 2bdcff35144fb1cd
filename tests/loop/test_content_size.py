"""The gate's "smaller at a tie" measures content: a candidate that ties and deletes only comments (its one other
change rewrites nothing it says) is not kept as smaller; one that ties and deletes code it never ran is."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from assay.loop.events import Decided, Measured, typed_events
from assay.proposers.base import Proposal, Proposer, ProposerView

from .conftest import git, make_project

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("inprocess_runner")]

COMMENTED = '''"""Online bin packing: the priority of putting an item into a bin."""


def priority(item: float, remaining: float, index: int) -> float:
    # How much room the item leaves: the less, the better the fit.
    leftover = remaining - item  # may be negative only when the item does not fit
    spare = remaining * item * 2.0 - index / 3.0  # an older idea, no longer used
    # A roomy bin scores higher here, which wastes space; a penalty for the bin's place keeps early bins first.
    score = 0.5 * leftover - 0.01 * index  # the weights were picked by hand, long ago
    # Nearly full bins are avoided: a sliver left over is wasted for good.
    if leftover < 0.1:  # the threshold of a sliver
        score = score - 0.2  # how much a sliver costs
    return score  # higher is better
'''


class Rewrite(Proposer):
    """Writes ``text`` as priority.py, once."""

    name = "rewrite"

    def __init__(self, text: str) -> None:
        self.text = text

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        (worktree / "priority.py").write_text(self.text)
        return Proposal(ok=True, description="rewrite")


def decide(tmp_path: Path, text: str) -> tuple[str, str, Measured]:
    root = make_project(tmp_path / "p", cases=4, items=30, extra="evolve:\n  target_pass_rate: null\n")
    (root / "priority.py").write_text(COMMENTED)
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "comments")
    outcome = run_sync(
        Evolution(load_config(root / "assay.yaml"), max_generations=1, proposer=Rewrite(text)).start()
    )
    events = typed_events(RunFiles(root / ".assay" / "runs" / outcome.run_id).read_events())
    record = [e.record for e in events if isinstance(e, Decided)][-1]
    measured = [e for e in events if isinstance(e, Measured) and e.tier == "L2"]
    assert measured[0].dev is not None and measured[1].dev is not None
    assert measured[0].dev.mean_score == measured[1].dev.mean_score  # a tie on every case
    return record.decision, record.reason, measured[1]


def test_a_tie_that_deletes_only_comments_is_not_smaller(tmp_path: Path) -> None:
    stripped = "\n".join(
        line.split("  #")[0] for line in COMMENTED.splitlines() if not line.strip().startswith("#")
    )
    # Its one change of content says the same (the operands of a product swapped): not a repeat, and a tie.
    text = stripped.replace("0.01 * index", "index * 0.01") + "\n"
    decision, reason, measured = decide(tmp_path, text)
    assert measured.size < 0.6 * len(COMMENTED.encode())  # 40% fewer bytes...
    assert decision == "discard" and "nothing smaller or cheaper" in reason, reason  # ...but nothing smaller


def test_a_tie_that_deletes_code_is_smaller(tmp_path: Path) -> None:
    dead = "    spare = remaining * item * 2.0 - index / 3.0  # an older idea, no longer used\n"
    decision, reason, _ = decide(tmp_path, COMMENTED.replace(dead, ""))
    assert decision == "keep" and "smaller in content" in reason, reason
