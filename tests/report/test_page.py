"""The run page's headline figures agree with the gate's, or say why they differ; its best is the run's."""

from __future__ import annotations

from markupsafe import escape

from assay.history.records import RunRecord
from assay.loop.events import Spend
from assay.model import Dimension
from assay.report import render_run
from assay.report.run import CandidateNode, RunReport

SUBSET = (
    "pass rate 0.857 -> 1.000, score 0.900 -> 1.000 on the 7 dev cases not yet marked unfixable (3 left out)"
)


def node(generation: int, decision: str, **fields: object) -> CandidateNode:
    return CandidateNode(
        id=f"cand-{generation:04d}",
        generation=generation,
        commit=f"c{generation}",
        parent_commit=None if generation == 0 else "c0",
        layer=1,
        proposer="mutate",
        description="a change",
        decision=decision,
        dev_score=0.5 + generation / 10,
        dev_pass_rate=0.5,
        **fields,  # type: ignore[arg-type]
    )


def report(*, suspects: list[str], best: str | None = None) -> RunReport:
    gate = {"progress": Dimension(passed=True, detail=SUBSET)}
    return RunReport(
        run=RunRecord(run_id="r", branch="assay/r", base_commit="c0", status="finished", best=best),
        status="finished",
        config=None,
        nodes=[node(0, "baseline"), node(1, "keep", gate=gate), node(2, "keep")],
        spent=Spend(case_runs=30),
        elapsed=3.0,
        stop_reason="reached 2 generations",
        suspects=suspects,
    )


def test_headline_figures_over_every_case_are_told_apart_from_the_gates() -> None:
    html = render_run(report(suspects=["a", "b", "c"]))
    assert str(escape(SUBSET)) in html  # the gate's figures, labelled with their subset
    assert (
        'id="unfixable-note">These scores are over every dev case. The gate judged progress without the 3 cases'
        " marked unfixable"
    ) in html
    assert 'id="unfixable-note"' not in render_run(report(suspects=[]))


def test_the_pages_best_is_the_one_the_run_named() -> None:
    assert report(suspects=[]).best.id == "cand-0002"  # type: ignore[union-attr]
    named = report(suspects=[], best="c1")
    assert named.best is not None and named.best.id == "cand-0001"
    assert 'data-start="cand-0001"' in render_run(named)
