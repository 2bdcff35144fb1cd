"""The evolve loop's driver: start or resume a run, measure the baseline, then run generations until a stop rule
says stop, and finish.

A run works on its own branch ``assay/<run-id>`` in a worktree under ``.assay/worktrees``; the user's branch
is never touched, and every candidate commit stays reachable through ``refs/assay/<run-id>/cand-NNNN``. The
run's events are the source of truth: state is their fold (:mod:`assay.loop.state`), so a resumed run goes on
exactly where its events end, and git, the run store and the text files are brought in line with them. The
process running a run holds its lock (:mod:`assay.history.owner`) throughout, so a run recorded as running that
nobody holds was interrupted, and two processes never run the same run.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from assay.config import PROPOSER_TYPES, AssayConfig, with_proposer
from assay.errors import AssayError, ConfigError
from assay.evaluation.deadend import DeadEnd, dead_end
from assay.evaluation.treecheck import check_tree, outside_line, refuse
from assay.extensions import GATE
from assay.gates.factory import min_gain
from assay.history.git import Git
from assay.history.owner import RunOwner, live_status, resumable
from assay.history.records import CandidateRecord, RunRecord
from assay.history.runfiles import RunFiles, read_events
from assay.history.store import RunStore
from assay.history.worktree import clear_run_locks
from assay.loop.announce import baseline_lines, generation_line, plan_text
from assay.loop.baseline import measure_baseline
from assay.loop.context import Clock, Given, LoopContext, Parts, build_parts
from assay.loop.events import (
    Dropped,
    Event,
    Finished,
    Interrupted,
    LayerPromoted,
    Overrides,
    Started,
    UntypedRun,
    typed_events,
)
from assay.loop.generation import pick_by_rating, run_generation, verify_best
from assay.loop.interrupt import install_sigint
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurer
from assay.loop.noise import NoiseSampler
from assay.loop.overrides import last_session, take_up
from assay.loop.parallel import CandidatesAhead
from assay.loop.pipeline import start_ahead
from assay.loop.proposing import Basis, tidy_due
from assay.loop.runlog import RunLog
from assay.loop.state import Best, LoopState, RunView, fold
from assay.loop.state.lineage import compared
from assay.loop.stops import DEAD_END, firing, standard_rules
from assay.loop.summary import RunResult, caveat, classify
from assay.presets import EvolveSettings, resolve
from assay.protocols import (
    ExecutorProtocol,
    GateProtocol,
    PairwiseJudgeProtocol,
    ParentSelectorProtocol,
    ProposerProtocol,
    RatingBackendProtocol,
    RunnerProtocol,
    StopRuleProtocol,
)
from assay.registry import UnknownName
from assay.registry import resolve as build_part


@dataclass
class RunOutcome:
    """What a finished (or stopped) run reports."""

    run_id: str
    stop_reason: str
    generations: int
    baseline: CandidateRecord
    best: CandidateRecord
    case_runs: int
    seconds: float
    suspects: list[str] = field(default_factory=list)
    unsandboxed: list[str] = field(default_factory=list)
    result: RunResult = field(default_factory=lambda: RunResult("no gain", "not classified"))
    caveat: str = ""  # why the best should not be adopted without a look ("" for none)
    status: Literal["finished", "stopped"] = "finished"  # stopped: by Ctrl-C or a STOP file, resumable

    @property
    def dead_end(self) -> bool:
        """Whether the run stopped because it could not go on: every baseline case failed before the artifact
        ran, or candidates in a row could not be proposed or evaluated (the runner or the proposer is broken)."""
        return self.stop_reason.startswith(DEAD_END)


def _tokens_per_case(known: Best) -> float:
    return known.dev.tokens / len(known.dev.cases) if known.dev.cases else 0.0


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


class Evolution:
    """One evolve run of a project (``start`` a new one or ``resume`` a stopped or killed one).

    ``proposer``, ``gate``, ``search``, ``judge`` (the tournament's pairwise judge), ``runner``, ``executor``
    and ``ratings`` (the tournament's rating backend) replace the configured ones, each an object or a
    registered name; ``checks`` maps check types to objects (or classes built with each check's spec) used
    instead of the registered ones; ``stop_rules`` (objects or names of built-in rules) are checked besides the
    standard ones. An object is checked against its Protocol (:mod:`assay.protocols`) by
    :func:`assay.extensions.conform` and always used, whatever the configuration says: one that does not
    conform is an ExtensionError, never replaced.
    ``preset``, ``max_generations``, ``use_cache``, and an ``executor`` or ``proposer`` given by name (one
    ``executor.type`` or ``evolve.proposer.type`` takes, with assay.yaml's options for it) override assay.yaml
    as the command line does; a run records them and ``resume`` takes them up (:mod:`assay.loop.overrides`).
    """

    def __init__(
        self,
        config: AssayConfig,
        *,
        preset: str | None = None,
        max_generations: int | None = None,
        use_cache: bool = True,
        executor: ExecutorProtocol | Literal["local", "ray"] | None = None,
        report: Callable[[str], None] | None = None,
        proposer: ProposerProtocol | str | None = None,
        gate: GateProtocol | str | None = None,
        search: ParentSelectorProtocol | str | None = None,
        judge: PairwiseJudgeProtocol | str | None = None,
        stop_rules: Sequence[StopRuleProtocol | str] = (),
        runner: RunnerProtocol | str | None = None,
        ratings: RatingBackendProtocol | str | None = None,
        checks: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(gate, str):
            config = config.model_copy(update={"evolve": config.evolve.model_copy(update={"gate": gate})})
        if isinstance(search, str):
            config = config.model_copy(update={"evolve": config.evolve.model_copy(update={"search": search})})
        self._config = config  # what the overrides apply to
        named_executor = executor if isinstance(executor, str) else None
        self._told = Overrides(
            max_generations=max_generations,
            preset=preset,
            executor=named_executor,
            no_cache=not use_cache,
            proposer=proposer if isinstance(proposer, str) and proposer in PROPOSER_TYPES else None,
        )
        self._reopened: str | None = None  # the run `reopen` chose
        self._resume_lines: list[str] = []  # what `reopen` changed, said once the run goes on
        self.opening: list[
            str
        ] = []  # the caller's first lines (the command's header), said once nothing refused
        self._take(self._told)
        self.report = report or (lambda line: None)
        # A gate or search name went into the configuration above; an object is checked now, and used as it is.
        self._given = Given(
            proposer=None if isinstance(proposer, str) and proposer in PROPOSER_TYPES else proposer,
            gate=None if isinstance(gate, str) else gate,
            search=None if isinstance(search, str) else search,
            judge=judge,
            stop_rules=tuple(stop_rules),
            runner=runner,
            executor=None if isinstance(executor, str) else executor,
            ratings=ratings,
            checks=dict(checks or {}),
        ).checked()
        self._state: LoopState | None = None  # the run's state, once a run has started
        self._view: RunView | None = None
        self._measurer: Measurer | None = None
        git = Git.discover(config.base_dir)
        if git is None:
            raise AssayError(f"{config.base_dir} is not inside a git repository; run `assay init` first")
        self.git = git
        config.ensure_data_path()
        self.store = RunStore(f"sqlite:///{config.data_path / 'assay.db'}")
        if self._given.gate is None:
            try:
                build_part(GATE, config.evolve.gate, self.settings.gate_options)
            except (UnknownName, TypeError) as exc:
                raise ConfigError(str(exc), file=config.path, field="evolve.gate") from None

    def _take(self, overrides: Overrides) -> None:
        """Run with ``overrides`` over the configuration."""
        config = self._config
        if overrides.executor is not None:
            executor = config.executor.model_copy(update={"type": overrides.executor})
            config = config.model_copy(update={"executor": executor})
        if overrides.proposer is not None:
            config = with_proposer(config, overrides.proposer)
        self.config, self.overrides = config, overrides
        self.settings = resolve(config.evolve, overrides.preset)
        self.max_generations = overrides.max_generations or self.settings.max_generations
        self.use_cache = not overrides.no_cache

    # -- starting and resuming -------------------------------------------------------------------------

    async def start(self) -> RunOutcome:
        parts = self._parts()  # a configuration error must not leave a half-made run behind
        try:
            status = check_tree(self.config, self.git, [c for cases in parts.cases.values() for c in cases])
            refuse(status, "assay evolve")
            self._refuse_unmeasurable(parts)
        except BaseException:
            await parts.measurer.aclose()
            await close_proposer(parts.proposer)
            raise
        for opening in self.opening:
            self.report(opening)
        if line := outside_line(status):
            self.report(line)
        run_id = new_run_id()
        base = self.git.head()
        run = RunRecord(
            run_id=run_id,
            branch=f"assay/{run_id}",
            base_commit=base,
            user_branch=self.git.current_branch(),
            config=self.config.model_dump(mode="json"),
            unsandboxed=sorted(parts.unsandboxed()),
        )
        self.git.set_branch(run.branch, base)
        with RunOwner(self._run_dir(run_id)):
            self.store.create_run(run)
            return await self._run(parts, run)

    def _refuse_unmeasurable(self, parts: Parts) -> None:
        """Refuse a run whose baseline could never be measured: the L1 static tier stops the artifact as it is
        (the tree holds what the run starts from), so no case would run and no candidate would be compared."""
        static = parts.measurer.static(self.config.artifact_dir)
        if not static.passed:
            raise ConfigError(
                f"the baseline cannot be measured: the L1 static tier stops the artifact ({static.blocked_line()});"
                " fix it first (`assay eval` lists every finding)",
                file=self.config.path,
            )

    def reopen(self, run_id: str | None = None) -> str:
        """The id of the run ``resume`` continues (default: the latest unfinished one), whose command line this
        takes up: the overrides its latest session ran with, each replaced by one given here, which :meth:`resume`
        reports in one line once nothing refuses the run (``resuming with -n 12 (the run was started with -n 6)``)."""
        if self._reopened is not None and run_id in (None, self._reopened):
            return self._reopened
        runs = self.store.list_runs()
        if run_id is None:
            open_runs = resumable(runs, self.config.data_path / "runs")
            if not open_runs:
                live = [r for r in runs if live_status(r, self._run_dir(r.run_id)) == "running"]
                why = "all runs finished" if runs else "no run was started here"
                if live:
                    why = f"run {live[-1].run_id} is running in another process"
                raise AssayError(f"no run to resume ({why}); start one with `assay evolve`")
            run_id = open_runs[-1].run_id
        elif self.store.get_run(run_id) is None:
            known = ", ".join(r.run_id for r in runs[-5:]) or "none"
            raise AssayError(f"no run {run_id!r}; recent runs: {known}")
        try:
            session = last_session(typed_events(read_events(self._run_dir(run_id))))
        except UntypedRun:
            session = None  # `resume` refuses it and says why
        ran = session.overrides if session is not None and session.overrides is not None else self._told
        generations = resolve(self._config.evolve, ran.preset).max_generations
        overrides, self._resume_lines = take_up(self._told, session, generations=generations)
        self._take(overrides)
        self._reopened = run_id
        return run_id

    async def resume(self, run_id: str | None = None) -> RunOutcome:
        """Continue the run :meth:`reopen` picks, with the command line it was started with."""
        run_id = self.reopen(run_id)
        parts = self._parts()
        with RunOwner(self._run_dir(run_id)):
            run = self.store.get_run(run_id)  # read again under the lock: its last owner may have finished it
            assert run is not None
            if run.status == "finished":
                raise AssayError(f"run {run.run_id} already finished ({run.stop_reason}); start a new one")
            for line in [*self.opening, *self._resume_lines]:  # after every refusal: a refusal comes alone
                self.report(line)
            return await self._run(parts, run)

    def _run_dir(self, run_id: str) -> Path:
        return self.config.data_path / "runs" / run_id

    def _parts(self) -> Parts:
        return build_parts(
            self.config,
            self.settings,
            self.max_generations,
            git=self.git,
            store=self.store,
            use_cache=self.use_cache,
            given=self._given,
        )

    # -- the run ---------------------------------------------------------------------------------------

    @property
    def view(self) -> RunView | None:
        """The run as its events have made it so far, frozen (None before a run has started); a new view after
        every event, so a reader in another thread (the live view) never sees the state change under it."""
        return self._view

    @property
    def cases_now(self) -> tuple[int, int] | None:
        """(done, total) of the case evaluation in progress, for progress lines (None before the run starts)."""
        return self._measurer.batch if self._measurer is not None else None

    def _publish(self, state: LoopState) -> None:
        self._view = state.view()

    def new_state(self) -> LoopState:
        """An empty state for this configuration (the fold starts from it)."""
        return new_state(
            self.config,
            self.settings,
            own_proposer=self._given.proposer is not None,
            own_selector=self._given.search is not None,
            ratings=self._given.ratings,  # type: ignore[arg-type]
        )

    async def _run(self, parts: Parts, run: RunRecord) -> RunOutcome:
        config, git = self.config, self.git
        self._measurer = parts.measurer
        files = RunFiles(self._run_dir(run.run_id))
        log = RunLog(files, self.store, run.run_id)
        try:
            events = log.events()
        except UntypedRun as exc:
            raise AssayError(
                f"run {run.run_id} cannot be resumed: {exc}; `assay status` and `assay log` still read it,"
                " start a new run with `assay evolve`"
            ) from None
        state = self._state = fold(self.new_state(), events)
        self._publish(state)
        log.catch_up(events)
        if state.watchers.finished is not None and state.watchers.finished.status == "finished":
            # Killed after its last event, before the store said so; a stopped run (Ctrl-C, STOP) goes on.
            await parts.measurer.aclose()
            await close_proposer(parts.proposer)
            return self._outcome(run, state, state.watchers.finished)
        unsandboxed = parts.unsandboxed()
        for what, why in unsandboxed.items():
            self.report(f"warning: the {what} runs unsandboxed: {why}")
        if not set(unsandboxed) <= set(run.unsandboxed):
            run = self.store.update_run(run.run_id, unsandboxed=sorted({*run.unsandboxed, *unsandboxed}))
        worktree = config.data_path / "worktrees" / run.run_id
        clear_run_locks(git, run.run_id)
        git.remove_worktree(worktree)
        git.add_worktree(worktree, run.base_commit)
        self.store.update_run(run.run_id, status="running")
        ctx = LoopContext(
            parts=parts,
            run=run,
            files=files,
            log=log,
            worktree=worktree,
            noise=NoiseSampler(
                parts.measurer, git, config.data_path / "worktrees" / f"{run.run_id}-parent", parts.prefix
            ),
            clock=Clock(state.spend.elapsed),
            report=self.report,
            on_event=self._publish,
        )
        try:
            ctx.emit(state, Started(resumed=bool(events), overrides=self.overrides))
            if state.lineage.baseline is None:
                await measure_baseline(ctx, state)
                for line in baseline_lines(state):
                    self.report(line)
            self._write_plan(ctx, state)
            assert state.lineage.best is not None
            git.set_branch(
                run.branch, state.lineage.best.commit
            )  # the events decide what the branch points at
            stuck = self._dead_end(ctx, state)
            if stuck is not None:
                for line in stuck.lines():
                    self.report(line)
                return await self._finish(ctx, state, f"{DEAD_END}: {stuck.case_id}: {stuck.error}")
            reason = await self._loop(ctx, state, events)
            return await self._finish(ctx, state, reason)
        finally:
            ctx.noise.close()
            await parts.measurer.aclose()
            await close_proposer(parts.proposer)
            git.remove_worktree(worktree)

    def _dead_end(self, ctx: LoopContext, state: LoopState) -> DeadEnd | None:
        """Before generation 1: every baseline case failed before the artifact ran (no edit can help)."""
        baseline = state.lineage.baseline
        if state.lineage.generation or baseline is None or baseline.measurement.dev is None:
            return None
        return dead_end(baseline.measurement.dev, ctx.artifact_paths(ctx.workdir))

    async def _loop(self, ctx: LoopContext, state: LoopState, events: list[Event]) -> str:
        rules = [
            *standard_rules(
                self.config.evolve,
                self.settings,
                self.max_generations,
                run_dir=ctx.files.run_dir,
                now=ctx.clock.now,
                pressed=lambda: ctx.interrupted,
            ),
            *ctx.parts.stop_rules,
        ]
        ahead, measuring = None, None
        if self.config.evolve.pipeline_depth > 1:
            ahead = await start_ahead(ctx, state, events, self._proposals_tree(ctx), fresh=self.new_state)
        if ahead is not None and self.config.evolve.parallel_candidates > 1:
            measuring = CandidatesAhead(ctx, state, ahead, self._candidate_trees(ctx))
        uninstall = install_sigint(ctx, self.report)
        reason: str | None = None
        try:
            while True:
                if state.feedback.promotion_due:
                    holdout = await verify_best(ctx, state)
                    ctx.emit(
                        state,
                        LayerPromoted(
                            generation=state.lineage.generation,
                            layer=state.feedback.tracker.current,
                            exhausted=state.feedback.tracker.exhausted,
                            best_holdout_score=holdout,
                        ),
                    )
                elif state.lineage.generation and state.lineage.generation % self.settings.l3_every == 0:
                    await verify_best(ctx, state)  # every N generations the best is measured on L3
                fired = firing(rules, state.view())
                if fired or ctx.tidying is not None:
                    # A rule that says the search is done lets the proposer tidy the best first; a limit on
                    # time or money (or a user's own rule) ends the run at once, tidying or not.
                    hard = [why for rule, why in fired if not rule.tidy_first]
                    reason = hard[0] if hard else ctx.tidying or fired[0][1]
                    if hard or ahead is not None or not tidy_due(ctx, state):
                        return reason
                    if ctx.tidying is None:
                        self.report(f"{reason}: tidying the best before the run ends")
                    ctx.tidying = reason
                unfixable = state.watchers.suspects
                prepared = None
                if measuring is not None:
                    measuring.fill()
                    if measuring.started(state.lineage.generation + 1):
                        prepared = await measuring.take(state.lineage.generation + 1)
                record = await run_generation(ctx, state, ahead, prepared)
                if state.watchers.suspects != unfixable:
                    self._write_plan(ctx, state)
                if ahead is not None:
                    await ahead.add_basis(Basis.of(state))
                self.report(generation_line(record))
                if ctx.tidying is not None and record.decision == "invalid":
                    # A tidying proposal that repeated an earlier candidate (or made none) would be made again
                    # at every generation: the proposer has nothing new to tidy with, and the run ends.
                    return ctx.tidying
        except asyncio.CancelledError:
            ctx.emit(state, Interrupted(generation=state.lineage.generation + 1))
            self.store.update_run(ctx.run.run_id, status="stopped", stop_reason="interrupted (Ctrl-C twice)")
            raise KeyboardInterrupt from None
        finally:
            uninstall()
            if measuring is not None:
                await measuring.close()
                for tree in measuring.trees:
                    self.git.remove_worktree(tree)
            if ahead is not None:
                dropped = await ahead.close()
                # A run that stops (STOP, Ctrl-C, an error) resumes: its waiting proposals are still to be taken.
                if dropped and reason and status_after(ctx, reason) == "finished":
                    ctx.emit(state, Dropped(numbers=dropped))
                self.git.remove_worktree(self._proposals_tree(ctx))

    def _write_plan(self, ctx: LoopContext, state: LoopState) -> None:
        """plan.md, a view of the run: the plan, the baseline's noise and the cases marked unfixable."""
        counts = {s.value: len(c) for s, c in ctx.parts.cases.items()}
        ctx.files.write_plan(
            plan_text(
                ctx.run,
                self.config,
                self.settings,
                counts,
                self.max_generations,
                noise=state.spend.noise,
                unfixable=state.watchers.suspects,
                own_stops=ctx.parts.stop_rules,
            )
        )

    def _proposals_tree(self, ctx: LoopContext) -> Path:
        return self.config.data_path / "worktrees" / f"{ctx.run.run_id}-proposals"

    def _candidate_trees(self, ctx: LoopContext) -> list[Path]:
        """One worktree per candidate measured at once, made afresh."""
        trees = []
        for slot in range(self.config.evolve.parallel_candidates):
            tree = self.config.data_path / "worktrees" / f"{ctx.run.run_id}-candidate-{slot}"
            self.git.remove_worktree(tree)
            self.git.add_worktree(tree, ctx.run.base_commit)
            trees.append(tree)
        return trees

    async def _finish(self, ctx: LoopContext, state: LoopState, reason: str) -> RunOutcome:
        pick_by_rating(ctx, state)
        await verify_best(ctx, state)
        best = state.lineage.best
        assert best is not None and state.lineage.baseline is not None
        holdout = best.measurement.holdout
        status = status_after(ctx, reason)
        ctx.emit(
            state,
            Finished(
                reason=reason,
                status=status,
                best=best.commit,
                generation=state.lineage.generation,
                best_dev_score=best.dev.mean_score if best.measurement.dev else None,
                best_holdout_score=holdout.mean_score if holdout else None,
                suspects=state.watchers.suspects,
            ),
        )
        assert state.watchers.finished is not None
        return self._outcome(ctx.run, state, state.watchers.finished)

    def _outcome(self, run: RunRecord, state: LoopState, finished: Finished) -> RunOutcome:
        """Mark the run as it finished in the store and say what it found."""
        assert state.lineage.best is not None
        self.store.update_run(
            run.run_id, status=finished.status, stop_reason=finished.reason, best=finished.best
        )
        best, baseline = state.lineage.best, state.lineage.records[0]
        return RunOutcome(
            run_id=run.run_id,
            stop_reason=finished.reason,
            generations=state.lineage.generation,
            baseline=baseline,
            best=best.record,
            case_runs=state.spend.spent.case_runs,
            seconds=state.spend.elapsed,
            suspects=state.watchers.suspects,
            unsandboxed=list(run.unsandboxed),
            result=self._result(state),
            caveat=caveat(baseline, best.record),
            status=finished.status,
        )

    def _result(self, state: LoopState) -> RunResult:
        """The kind of result of the run's best against its baseline (a gain, a simplification, ...)."""
        best, baseline = state.lineage.best, state.lineage.baseline
        assert best is not None and baseline is not None
        noisy = state.spend.noise is not None and not state.spend.noise.deterministic
        tie = (
            0.0
            if self._given.gate is not None
            else min_gain(self.config.evolve.gate, self.settings.gate_options, noisy=noisy)
        )
        return classify(
            baseline.record,
            best.record,
            sizes=compared(baseline.size, best.size),
            tokens_per_case=(_tokens_per_case(baseline), _tokens_per_case(best)),
            min_gain=tie,
        )


def new_state(
    config: AssayConfig,
    settings: EvolveSettings,
    *,
    own_proposer: bool = False,
    own_selector: bool = False,
    ratings: RatingBackendProtocol | str | None = None,
) -> LoopState:
    """The empty state a run of ``config`` folds its events into (``own_proposer``, ``own_selector``: the
    caller gave a proposer or a parent selector of its own; ``ratings``: the tournament's rating backend, if not
    the configured one)."""
    evolve = config.evolve
    return LoopState.new(
        LayerTracker(
            layers=list(evolve.layers),
            discards_per_layer=evolve.discards_per_layer,
            cycle=evolve.layers_cycle and not own_proposer,
        ),
        keep_all_measurements=evolve.search != "greedy" or own_selector,
        tournament=(
            evolve.tournament.model_copy(update={"matches_per_generation": settings.matches_per_generation})
            if evolve.tournament.enabled
            else None
        ),
        ratings=ratings,
    )


def status_after(ctx: LoopContext, reason: str) -> Literal["finished", "stopped"]:
    """How a run that ends for ``reason`` ends: ``stopped`` (resumable) by Ctrl-C or a STOP file."""
    return "stopped" if ctx.interrupted or reason == "STOP file found" else "finished"


async def close_proposer(proposer: object) -> None:
    """Close a proposer's clients; a proposer of the user's own without ``aclose`` has none to close."""
    close = getattr(proposer, "aclose", None)
    if close is not None:
        await close()
