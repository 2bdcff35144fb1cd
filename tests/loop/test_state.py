"""The fold: loop state is what applying the run's events gives, and the same events read back from disk give
the same state."""

from __future__ import annotations

import json

from assay.config import TournamentConfig
from assay.evaluation.evaluator import EvalResult
from assay.history.records import CandidateRecord, EventRecord, candidate_id
from assay.loop.events import (
    Committed,
    Decided,
    Event,
    ExtraRuns,
    LayerPromoted,
    MatchesPlayed,
    MatchOutcomeData,
    Measured,
    NoiseMeasured,
    ProposalMade,
    Proposed,
    Spend,
    Started,
    Verified,
    from_record,
    to_record,
)
from assay.loop.flags import Flag
from assay.loop.layers import LayerTracker
from assay.loop.state import SUSPECT_AFTER, LoopState, apply, fold
from assay.loop.state.lineage import Size
from assay.loop.summary import caveat
from assay.model import CaseResult, Dimension, Output, OverfitVerdict, Split
from assay.search import RankedSelector
from assay.search.archive import accuracy_ranks
from assay.static.report import StaticReport

DEV = ["a", "b", "c", "d"]


def dev(*passing: str) -> EvalResult:
    return EvalResult(
        cases=[
            CaseResult(
                id=cid,
                split=Split.DEV,
                passed=cid in passing,
                score=float(cid in passing),
                output=Output(text="x"),
            )
            for cid in DEV
        ]
    )


def holdout(score: float) -> EvalResult:
    return EvalResult(
        cases=[CaseResult(id="h", split=Split.HOLDOUT, passed=score == 1, score=score, output=Output())]
    )


def record(
    generation: int, decision: str, commit: str | None, parent: str | None, **fields: object
) -> CandidateRecord:
    return CandidateRecord(
        run_id="r",
        generation=generation,
        candidate_id=candidate_id(generation),
        commit=commit,
        parent=parent,
        proposer="test",
        description=f"change {generation}",
        decision=decision,  # type: ignore[arg-type]
        **{"layer": 1, **fields},  # type: ignore[arg-type]
    )


def baseline_events() -> list[Event]:
    return [
        Started(),
        Measured(
            commit="c0",
            generation=0,
            tier="L2",
            static=StaticReport(),
            dev=dev("a"),
            size=100,
            content="h0",
            spent=Spend(case_runs=4),
            elapsed=1.0,
        ),
        Measured(
            commit="c0", generation=0, tier="L3", holdout=holdout(0.5), spent=Spend(case_runs=1), elapsed=2.0
        ),
        NoiseMeasured(commit="c0", runs={cid: [1.0 if cid == "a" else 0.0] for cid in DEV}, runs_per_case=1),
        Decided(record=record(0, "baseline", "c0", None, dev_score=0.25), elapsed=2.5),
    ]


def generation(
    g: int, decision: str, passing: tuple[str, ...], parent: str = "c0", **fields: object
) -> list[Event]:
    commit = f"c{g}"
    layer = fields.get("layer", 1)
    assert isinstance(layer, int)
    proposal = ProposalMade(
        parent=parent, layer=layer, proposer="test", description=f"change {g}", commit=commit
    )
    return [
        Committed(generation=g, proposal=proposal),
        Measured(
            commit=commit,
            generation=g,
            tier="L2",
            static=StaticReport(),
            dev=dev(*passing),
            size=100 + g,
            content=f"h{g}",
            spent=Spend(case_runs=4),
        ),
        Decided(record=record(g, decision, commit, parent, dev_score=len(passing) / 4, **fields)),
    ]


def new_state(**kwargs: object) -> LoopState:
    return LoopState.new(LayerTracker(layers=[1, 2], discards_per_layer=2), **kwargs)  # type: ignore[arg-type]


def test_the_baseline_becomes_the_best_with_its_measurement_and_what_it_spent() -> None:
    state = fold(new_state(tournament=TournamentConfig()), baseline_events())
    assert state.lineage.baseline is not None and state.lineage.best is not None
    assert state.lineage.best.commit == "c0" and state.lineage.best.size == Size(100)
    assert state.lineage.best.measurement.dev == dev(
        "a"
    ) and state.lineage.best.measurement.holdout == holdout(0.5)
    assert (
        state.spend.spent == Spend(case_runs=5) and state.spend.elapsed == 2.5 and state.spend.sessions == 1
    )
    assert [n.id for n in state.lineage.archive.nodes()] == ["c0"]
    assert state.lineage.ratings is not None and state.lineage.ratings.commits == {"cand-0000": "c0"}
    assert state.spend.noise is not None and state.spend.noise.deterministic
    assert state.view().best_pass_rate == 0.25


def test_a_kept_candidate_moves_the_best_and_a_discard_does_not() -> None:
    state = fold(new_state(), baseline_events() + generation(1, "keep", ("a", "b")))
    assert state.lineage.pending is None and state.lineage.generation == 1
    assert (
        state.lineage.best is not None
        and state.lineage.best.commit == "c1"
        and state.lineage.best.size == Size(101)
    )
    assert (
        state.watchers.kept_scores == [0.5]
        and state.watchers.since_keep == 0
        and state.feedback.last_gate == []
    )
    assert state.lineage.archive.get("c1").parent == "c0" and state.lineage.archive.get("c0").children == 1
    assert state.watchers.content_hashes == ["h1"]
    discard = generation(2, "discard", ("a",), parent="c1")
    discard[-1].record.gate = {"progress": Dimension(passed=False, detail="pass rate fell")}  # type: ignore[union-attr]
    fold(state, discard)
    assert state.lineage.best.commit == "c1" and state.watchers.since_keep == 1
    assert state.feedback.last_gate == ["progress: pass rate fell"]
    assert "c2" not in state.lineage.measurements  # greedy search never builds on a discarded candidate
    # Each differed from the best's failing set before its decision (the kept one's gain counts too).
    assert state.watchers.failing_sets == [frozenset({"c", "d"}), frozenset({"b", "c", "d"})]
    assert [h.decision for h in state.feedback.history] == ["keep", "discard"]


def test_a_search_that_samples_parents_keeps_every_measurement() -> None:
    state = fold(new_state(keep_all_measurements=True), baseline_events() + generation(1, "discard", ("b",)))
    assert state.lineage.measurements["c1"].dev == dev("b")


def _matches(candidate: str, commit: str, opponent: str, won: bool, stage: str) -> MatchesPlayed:
    winner = candidate if won else opponent
    return MatchesPlayed(
        candidate=candidate,
        commit=commit,
        kept=won and stage == "tournament",
        updates=[[MatchOutcomeData(a=candidate, b=opponent, winner=winner)]],
        baseline_win_rate=0.0,
        rating=0.0,
        uncertainty=0.0,
        stage=stage,  # type: ignore[arg-type]
    )


def test_a_candidate_the_judge_screened_out_inherits_its_parents_accuracy_rank_for_sampling() -> None:
    # c1 is kept (and beats the baseline); c2, built on c1, loses its screening match to c1 and is never run.
    one = generation(1, "keep", ("a", "b"))
    one.insert(2, _matches("cand-0001", "c1", "cand-0000", True, "tournament"))
    proposal = ProposalMade(parent="c1", layer=1, proposer="test", description="change 2", commit="c2")
    two: list[Event] = [
        Committed(generation=2, proposal=proposal),
        _matches("cand-0002", "c2", "cand-0001", False, "screen"),
        Decided(record=record(2, "discard", "c2", "c1", flags=["screened-by-judge"])),
    ]
    tournament = TournamentConfig(rating="bradley_terry")
    state = fold(new_state(keep_all_measurements=True, tournament=tournament), baseline_events() + one + two)
    archive = state.lineage.archive
    unevaluated, parent = archive.get("c2"), archive.get("c1")
    assert unevaluated.accuracy is None and unevaluated.parent == "c1" and parent.children == 1
    ranks = accuracy_ranks(archive)
    assert ranks["c2"] == ranks["c1"] == 0 and ranks["c0"] == 2  # the parent's rank, shared as a tie
    assert parent.bt_rank == 0 and unevaluated.bt_rank is not None and unevaluated.bt_rank > 0
    logits = RankedSelector().logits(archive)
    assert (
        logits["c2"] == -unevaluated.bt_rank - ranks["c1"]
    )  # its own rating rank, the inherited accuracy rank
    assert RankedSelector().probabilities(archive)["c2"] > 0


def test_discards_promote_the_layer_once_and_a_retry_does_not_count() -> None:
    events = (
        baseline_events()
        + generation(1, "discard", ("a",))
        + generation(2, "discard", ("a",), flags=["gate-retry"])
    )
    state = fold(new_state(), events)
    assert state.feedback.tracker.current == 1 and not state.feedback.promotion_due
    fold(state, generation(3, "discard", ("a",)))
    assert state.feedback.tracker.current == 2 and state.feedback.promotion_due
    apply(state, LayerPromoted(generation=3, layer=2, exhausted=False))
    assert not state.feedback.promotion_due


def test_an_invalid_proposal_counts_the_sampled_parents_visit_and_takes_its_pipeline_number() -> None:
    state = fold(new_state(), baseline_events())
    proposal = ProposalMade(parent="c0", layer=1, proposer="test", description="failed", number=4)
    apply(state, Proposed(number=4, proposal=proposal, priority=0.0))
    assert 4 in state.pipeline.proposals and state.pipeline.last_proposal == 4
    assert (
        state.lineage.archive.get("c0").visits == 0
    )  # counted when a generation takes it, not when it is made
    apply(state, Decided(record=record(1, "invalid", None, "c0"), sampled=True, proposal=4))
    assert state.lineage.archive.get("c0").visits == 1 and state.pipeline.proposals == {}
    assert state.feedback.last_gate == ["change 1"] and state.watchers.content_hashes == []


def test_the_paired_gates_runs_are_settled_on_both_sides() -> None:
    events = generation(1, "keep", ("a", "b"))
    events[-1] = Decided(
        record=events[-1].record,  # type: ignore[union-attr]
        extra_runs=ExtraRuns(parent="c0", on_parent={"b": [0.0, 1.0]}, on_candidate={"b": [1.0]}),
    )
    state = fold(new_state(), baseline_events() + events)
    assert state.spend.runs["c0"]["b"] == [0.0, 0.0, 1.0]
    assert state.spend.runs["c1"] == {"a": [1.0], "b": [1.0, 1.0], "c": [0.0], "d": [0.0]}


def test_a_verification_puts_the_holdout_on_the_best_and_its_record() -> None:
    state = fold(new_state(), baseline_events() + generation(1, "keep", ("a", "b")))
    apply(state, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(1.0)))
    assert state.lineage.best is not None and state.lineage.best.measurement.holdout == holdout(1.0)
    assert state.lineage.best.record.holdout_score == 1.0 and state.lineage.records[1].holdout_score == 1.0


def test_a_best_verified_later_carries_the_verification_verdict() -> None:
    state = fold(new_state(), baseline_events() + generation(1, "keep", DEV, dev_pass_rate=1.0))
    short = OverfitVerdict(rule="paired", flagged=True, reason="its gain on holdout fell short (...)")
    apply(state, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(1.0), overfitting=short))
    best = state.lineage.best
    assert best is not None and best.record.flags == [Flag.OVERFITTING] and best.record.overfitting == short
    assert state.lineage.records[1] == best.record  # the record `assay status` and the summary read
    assert caveat(
        state.lineage.records[0], best.record
    ) == "cand-0001 was flagged overfitting (its gain on" + (" holdout fell short (...))")
    clear = fold(new_state(), baseline_events() + generation(1, "keep", DEV, dev_pass_rate=1.0))
    within = OverfitVerdict(rule="paired", flagged=False, reason="within noise")
    # A holdout pass rate far below dev, but the verdict (the paired rule) does not flag it: no flag.
    apply(clear, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(0.0), overfitting=within))
    assert clear.lineage.records[1].flags == [] and clear.lineage.records[1].overfitting == within


def test_a_verification_an_older_assay_recorded_flags_by_its_overfitting_gap() -> None:
    """Its ``verified`` event has no verdict: the rule of the assay that wrote it, a 0.15 gap, applies."""
    state = fold(new_state(), baseline_events() + generation(1, "keep", DEV, dev_pass_rate=1.0))
    assert state.lineage.records[1].flags == []  # L3 was not due at its decision
    apply(
        state, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(0.0))
    )  # 1.0 on dev, 0.0 here
    best = state.lineage.best
    assert best is not None and best.record.flags == [Flag.OVERFITTING]
    assert state.lineage.records[1].flags == [Flag.OVERFITTING]
    assert caveat(state.lineage.records[0], best.record).startswith("cand-0001 was flagged overfitting")
    # Verified again (the end of a resumed run): flagged once.
    apply(state, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(0.0)))
    assert state.lineage.records[1].flags == [Flag.OVERFITTING]
    # Within the gap: no flag.
    close = fold(new_state(), baseline_events() + generation(1, "keep", DEV, dev_pass_rate=1.0))
    apply(close, Verified(candidate_id="cand-0001", commit="c1", holdout=holdout(1.0)))
    assert close.lineage.records[1].flags == [] and close.lineage.best is not None
    assert caveat(close.lineage.records[0], close.lineage.best.record) == ""


def test_a_case_the_best_keeps_failing_becomes_a_suspect() -> None:
    events = baseline_events()
    for g in range(1, SUSPECT_AFTER + 1):
        events += generation(g, "discard", ("a",))
    state = fold(new_state(), events)
    assert state.watchers.suspects == ["b", "c", "d"]


def test_events_read_back_from_disk_fold_to_the_same_state() -> None:
    events = (
        baseline_events() + generation(1, "keep", ("a", "b")) + generation(2, "discard", ("a",), parent="c1")
    )
    live = fold(new_state(), events)
    stored = [to_record(e, run_id="r", seq=i) for i, e in enumerate(events, start=1)]
    read = [from_record(EventRecord.load(json.loads(r.model_dump_json()))) for r in stored]
    again = fold(new_state(), read)
    assert again.lineage.records == live.lineage.records and again.spend.spent == live.spend.spent
    assert again.lineage.best is not None and live.lineage.best is not None
    assert (
        again.lineage.best.measurement == live.lineage.best.measurement
        and again.lineage.best.size == live.lineage.best.size
    )
    assert [(n.id, n.parent, n.accuracy, n.children) for n in again.lineage.archive.nodes()] == [
        (n.id, n.parent, n.accuracy, n.children) for n in live.lineage.archive.nodes()
    ]
    assert (again.feedback.history, again.feedback.last_gate, again.watchers.failing_sets) == (
        live.feedback.history,
        live.feedback.last_gate,
        live.watchers.failing_sets,
    )


def test_the_history_says_what_each_candidate_measured_against_the_best_it_was_compared_with() -> None:
    state = fold(new_state(), baseline_events())
    for g, passing in ((1, ("a",)), (2, ("b", "c"))):  # the incumbent passes "a" alone: 0.25
        fold(state, generation(g, "discard", passing))
    same, better = state.feedback.history
    assert (same.commit, same.score, same.best_score, same.crashed) == ("c1", 0.25, 0.25, False)
    assert (better.commit, better.score, better.best_score) == ("c2", 0.5, 0.25)


def crashing(g: int, error: str) -> list[Event]:
    """Generation ``g``: a candidate whose every dev case crashed with ``error``, discarded."""
    commit = f"c{g}"
    proposal = ProposalMade(parent="c0", layer=1, proposer="test", description=f"change {g}", commit=commit)
    broken = EvalResult(
        cases=[
            CaseResult(
                id=cid,
                split=Split.DEV,
                passed=False,
                score=0.0,
                output=Output(
                    error="exit code 1", stderr_tail=f"Traceback (most recent call last):\n{error}"
                ),
            )
            for cid in DEV
        ]
    )
    return [
        Committed(generation=g, proposal=proposal),
        Measured(
            commit=commit, generation=g, tier="L2", static=StaticReport(), dev=broken, size=100, content="x"
        ),
        Decided(record=record(g, "discard", commit, "c0", dev_score=0.0)),
    ]


def test_candidates_that_could_not_be_proposed_or_evaluated_are_counted_in_a_row_with_their_errors() -> None:
    state = fold(new_state(), baseline_events())
    failed = record(1, "invalid", None, "c0").model_copy(update={"description": "proposal failed: no edit"})
    apply(state, Decided(record=failed))
    state = fold(state, crashing(2, "ModuleNotFoundError: No module named 'helpers'"))
    assert state.view().failed_in_a_row == (
        "proposal failed: no edit",
        "ModuleNotFoundError: No module named 'helpers'",
    )
    state = fold(state, generation(3, "discard", ("b",)))  # evaluated: the row ends
    assert state.view().failed_in_a_row == ()
    state = fold(state, crashing(4, "boom"))
    assert state.view().failed_in_a_row == ("boom",)
    proposal = ProposalMade(parent="c0", layer=1, proposer="t", description="d", commit="c5")
    apply(state, Committed(generation=5, proposal=proposal))
    apply(state, Decided(record=record(5, "discard", "c5", "c0", flags=["screened-by-judge"])))
    assert state.view().failed_in_a_row == ()  # made and judged: the proposer works


def test_crashes_do_not_count_when_the_baseline_itself_crashes_on_every_case() -> None:
    events = baseline_events()
    events[1] = crashing(0, "ZeroDivisionError")[1]  # the baseline's L2 measurement: every case crashed
    state = fold(new_state(), events)
    state = fold(state, crashing(1, "ZeroDivisionError: division by zero"))
    assert state.view().failed_in_a_row == ()
