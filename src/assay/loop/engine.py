"""The evolve loop: propose one change, commit it, verify it in tiers, gate it, keep or roll back, log it.

A run works on its own branch ``assay/<run-id>`` in a worktree under ``.assay/worktrees``; the user's branch
is never touched. Every candidate commit stays reachable through ``refs/assay/<run-id>/cand-NNNN``. The
candidate records in ``experiments.jsonl`` are the source of truth: on resume, git and the run store are
brought in line with them. The process running a run holds its lock (:mod:`assay.history.owner`) throughout,
so a run recorded as running that nobody holds was interrupted, and two processes never run the same run.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.config import AssayConfig
from assay.errors import AssayError, ConfigError
from assay.evaluation.evaluator import EvalResult
from assay.evaluation.session import in_config
from assay.gates import GATES, GateInput
from assay.history.git import Git
from assay.history.owner import RunOwner, live_status, resumable
from assay.history.records import CandidateRecord, RunRecord, Verification, best_candidate, candidate_id
from assay.history.runfiles import RunFiles
from assay.history.scope import artifact_files
from assay.history.store import RunStore
from assay.loop.interrupt import install_sigint
from assay.loop.journal import Journal
from assay.loop.judging import judge_calls, make_match_judge
from assay.loop.layers import LayerTracker
from assay.loop.measure import Measurement, Measurer
from assay.loop.noise import Noise, baseline_runs, make_gate
from assay.loop.pipeline import ProposalPipeline
from assay.loop.proposing import Proposing, make_proposer
from assay.loop.rating import Tournament
from assay.loop.report import generation_line, plan_text, score
from assay.loop.stops import RunState, first_reason, standard_rules
from assay.model import Case, Split
from assay.presets import resolve
from assay.proposers.redaction import Redactor, secrets_for
from assay.ratings import RATINGS
from assay.registry import UnknownName
from assay.search import Archive, Node, SearchError, make_selector

OVERFIT_GAP = 0.15
SUSPECT_AFTER = 5


@dataclass
class Best:
    commit: str
    generation: int
    measurement: Measurement
    size: int


@dataclass
class Outcome:
    """What a finished (or stopped) run reports."""

    run_id: str
    stop_reason: str
    generations: int
    baseline: CandidateRecord
    best: CandidateRecord
    case_runs: int
    seconds: float
    suspects: list[str] = field(default_factory=list)


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


class Evolution(Proposing):
    """One evolve run of a project (``start`` a new one or ``resume`` a stopped or killed one)."""

    def __init__(
        self,
        config: AssayConfig,
        *,
        preset: str | None = None,
        max_generations: int | None = None,
        use_cache: bool = True,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.settings = resolve(config.evolve, preset)
        self.max_generations = max_generations or self.settings.max_generations
        self.use_cache = use_cache
        self.report = report or (lambda line: None)
        git = Git.discover(config.base_dir)
        if git is None:
            raise AssayError(f"{config.base_dir} is not inside a git repository; run `assay init` first")
        self.git = git
        self.prefix = (
            config.artifact_dir.relative_to(git.root).as_posix() if config.artifact_dir != git.root else ""
        )
        config.ensure_data_path()
        self.store = RunStore(f"sqlite:///{config.data_path / 'assay.db'}")
        try:
            with in_config(config):
                self.gate = GATES.get(config.evolve.gate)(**config.evolve.gate_options)
        except (UnknownName, TypeError) as exc:
            raise ConfigError(str(exc), file=config.path, field="evolve.gate") from None

    # -- starting and resuming -------------------------------------------------------------------------

    async def start(self) -> Outcome:
        data_rel = self._relative_to_repo(self.config.data_path)
        dirty = self.git.dirty_paths(ignore=[data_rel] if data_rel else [])
        if dirty:
            raise AssayError(
                f"the working tree has uncommitted changes ({', '.join(dirty[:3])}{'...' if len(dirty) > 3 else ''});"
                " commit or stash them first: a run starts from a commit"
            )
        self._prepare()  # a configuration error must not leave a half-made run behind
        run_id = new_run_id()
        base = self.git.head()
        run = RunRecord(
            run_id=run_id,
            branch=f"assay/{run_id}",
            base_commit=base,
            user_branch=self.git.current_branch(),
            config=self.config.model_dump(mode="json"),
        )
        self.git.set_branch(run.branch, base)
        with RunOwner(self._run_dir(run_id)):
            self.store.create_run(run)
            return await self._run(run)

    async def resume(self, run_id: str | None = None) -> Outcome:
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
        self._prepare()
        with RunOwner(self._run_dir(run_id)):
            run = self.store.get_run(run_id)  # read again under the lock: its last owner may have finished it
            assert run is not None
            if run.status == "finished":
                raise AssayError(f"run {run.run_id} already finished ({run.stop_reason}); start a new one")
            return await self._run(run)

    def _run_dir(self, run_id: str) -> Path:
        return self.config.data_path / "runs" / run_id

    def _prepare(self) -> None:
        """Load and split the cases, build the runner, judge and proposer (errors name assay.yaml)."""
        from assay.evaluation.session import select_cases

        config = self.config
        selection = select_cases(config, "all")
        self.cases: dict[Split, list[Case]] = {s: [c for c, cs in selection.cases if cs == s] for s in Split}
        hidden = self.cases[Split.HOLDOUT] + self.cases[Split.REGRESSION]
        self.redactor = Redactor(secrets_for([c for c, _ in selection.cases], hidden))
        with in_config(config):
            self.measurer = Measurer(
                config, self.cases, use_cache=self.use_cache, judge_votes=self.settings.judge_votes
            )
            self.proposer = make_proposer(config, use_cache=self.use_cache)
            try:
                self.selector = make_selector(config.evolve.search, **config.evolve.search_options)
            except (SearchError, TypeError) as exc:
                raise ConfigError(str(exc), file=config.path, field="evolve.search") from None
            self.match_judge = make_match_judge(config, self.redactor, use_cache=self.use_cache)
            try:
                RATINGS.get(config.evolve.tournament.rating)
            except UnknownName as exc:
                raise ConfigError(str(exc), file=config.path, field="evolve.tournament.rating") from None
        if config.evolve.pipeline_depth > 1 and config.evolve.search == "greedy":
            raise ConfigError(
                "a pipeline of proposals needs a search that samples parents from the archive; "
                "set `evolve.search: ranked` (or dgm), or `evolve.pipeline: 1`",
                file=config.path,
                field="evolve.pipeline",
            )
        self.pipeline: ProposalPipeline | None = None
        self.proposals_tree: Path | None = None

    def _clear_stale_locks(self) -> None:
        """A run killed inside a git command leaves its lock files behind; only this run's refs are ours."""
        git_dir = Path(self.git.run("rev-parse", "--git-common-dir").stdout.strip())
        if not git_dir.is_absolute():
            git_dir = self.git.root / git_dir
        run_id = self.run.run_id
        for lock in [
            *(git_dir / "refs" / "heads" / "assay").glob(f"{run_id}*.lock"),
            *(git_dir / "refs" / "assay" / run_id).glob("*.lock"),
            *(git_dir / "worktrees" / run_id).glob("*.lock"),
        ]:
            lock.unlink(missing_ok=True)

    def _relative_to_repo(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.git.root).as_posix()
        except ValueError:
            return None

    # -- the loop --------------------------------------------------------------------------------------

    async def _run(self, run: RunRecord) -> Outcome:
        config = self.config
        started = time.monotonic()
        self.run = run
        self.run_dir = self._run_dir(run.run_id)
        self.files = RunFiles(self.run_dir)
        self.journal = Journal(self.files, self.store, run.run_id)
        self.journal.sync_store()
        self.worktree = config.data_path / "worktrees" / run.run_id
        self._clear_stale_locks()
        self.git.remove_worktree(self.worktree)
        self.git.add_worktree(self.worktree, run.base_commit)
        self.workdir = self.worktree / self.prefix if self.prefix else self.worktree
        self.store.update_run(run.run_id, status="running")
        self._measured: dict[str, Measurement] = {}
        self.noise = Noise(
            self.measurer, self.git, config.data_path / "worktrees" / f"{run.run_id}-parent", self.prefix
        )
        try:
            records = self.journal.candidates()
            if not records:
                records = [await self._baseline()]
                self.files.write_plan(
                    plan_text(
                        self.run,
                        self.config,
                        self.settings,
                        {s.value: len(c) for s, c in self.cases.items()},
                        self.max_generations,
                        noise=self.noise.estimate,
                    )
                )
            state, tracker = await self._restore(records)
            reason = await self._loop(state, tracker)
            return await self._finish(state, reason, started)
        finally:
            self.noise.close()
            await self.measurer.aclose()
            self.git.remove_worktree(self.worktree)

    async def _measure(self, generation: int, *, full: bool) -> Measurement:
        traces = self.files.traces_dir(generation)
        measurement = Measurement(static=self.measurer.static(self.workdir))
        if measurement.blocked:
            return measurement
        measurement.dev = await self.measurer.split(Split.DEV, self.workdir, traces)
        if full:
            await self._measure_l3(measurement, generation)
        return measurement

    async def _measure_l3(self, measurement: Measurement, generation: int) -> None:
        traces = self.files.traces_dir(generation)
        measurement.holdout = await self.measurer.split(Split.HOLDOUT, self.workdir, traces)
        measurement.regression = await self.measurer.split(Split.REGRESSION, self.workdir, traces)

    def _artifact_size(self) -> int:
        paths = artifact_files(self.workdir, self.config.artifact.paths, forbid=self.config.artifact.forbid)
        return sum((self.workdir / p).stat().st_size for p in paths)

    async def _baseline(self) -> CandidateRecord:
        self.git.reset_worktree(self.worktree, self.run.base_commit)
        measurement = await self._measure(0, full=True)
        times = baseline_runs(self.config, self.cases)
        if measurement.dev is not None:
            estimate = await self.noise.measure_baseline(
                self.run.base_commit, measurement.dev, self.workdir, times
            )
            self.noise.save(self.run_dir, self.run.base_commit)
            self.journal.event("noise", runs_per_case=times, **estimate.to_dict())
            self.report(f"noise at the baseline: {estimate.summary()}")
        record = self._new_record(
            0, self.run.base_commit, None, 1, "baseline", "baseline", "baseline", measurement, 0.0
        )
        tokens, cost = self.noise.take_cost()
        record.tokens += tokens
        record.cost_usd += cost
        self._measured[self.run.base_commit] = measurement
        self.journal.candidate(record)
        self.journal.event(
            "baseline",
            commit=self.run.base_commit,
            dev_score=record.dev_score,
            holdout_score=record.holdout_score,
        )
        self.report(
            f"baseline: dev pass rate {score(record.dev_pass_rate)}, score {score(record.dev_score)},"
            f" holdout score {score(record.holdout_score)}"
        )
        return record

    async def _measured_at(self, commit: str, generation: int) -> Measurement:
        """The measurement of a commit (from this session, or measured again after a resume)."""
        if commit not in self._measured:
            self.git.reset_worktree(self.worktree, commit)
            self._measured[commit] = await self._measure(generation, full=False)
            self.journal.event("remeasured", commit=commit, generation=generation)
        return self._measured[commit]

    async def _restore(self, records: list[CandidateRecord]) -> tuple[RunState, LayerTracker]:
        """Rebuild the loop's state from the candidate records (all of it after a resume)."""
        evolve = self.config.evolve
        tracker = LayerTracker(layers=list(evolve.layers), discards_per_layer=evolve.discards_per_layer)
        state = RunState(run_dir=self.run_dir)
        baseline = records[0]
        self.best_record = best_candidate(records)
        for record in records[1:]:
            if "gate-retry" not in record.flags:
                tracker.record(record.decision == "keep")
            state.since_keep = 0 if record.decision == "keep" else state.since_keep + 1
            if record.decision == "keep":
                state.kept_scores.append(record.dev_score or 0.0)
        state.generation = records[-1].generation
        state.tokens = sum(r.tokens for r in records)
        state.cost_usd = sum(r.cost_usd for r in records)
        state.judge_calls = sum(judge_calls(r) for r in records)
        state.layers_exhausted = tracker.exhausted
        self.history = [
            {"generation": r.generation, "description": r.description, "decision": r.decision}
            for r in records[1:]
        ]
        last = records[-1]
        self.last_gate = [
            f"{k}: {v.get('detail', '')}" for k, v in last.gate.items() if not v.get("passed", True)
        ]
        self.baseline = await self._measured_at(baseline.commit or self.run.base_commit, 0)
        best_commit = self.best_record.commit or self.run.base_commit
        self.best = Best(
            best_commit,
            self.best_record.generation,
            await self._measured_at(best_commit, self.best_record.generation),
            0,
        )
        self.git.reset_worktree(self.worktree, best_commit)
        self.best.size = self._artifact_size()
        self.git.set_branch(self.run.branch, best_commit)  # the records decide what the branch points at
        root = baseline.commit or self.run.base_commit
        self.archive = Archive([Node(root, None, min(1.0, max(0.0, baseline.dev_score or 0.0)))])
        for record in records[1:]:
            if record.commit and record.dev_score is not None:
                parent = record.parent if record.parent in self.archive else self.archive.nodes()[0].id
                self.archive.add(Node(record.commit, parent, min(1.0, max(0.0, record.dev_score))))
                self.archive.record_child(parent)
        events = self.files.read_events()
        # A candidate committed (and logged) before the run was killed, still waiting for its decision.
        self.pending = next(
            (
                e.data
                for e in reversed(events)
                if e.kind == "committed" and e.data.get("generation") == state.generation + 1
            ),
            None,
        )
        self.tournament: Tournament | None = None
        if self.config.evolve.tournament.enabled:
            self.tournament = Tournament(
                self.config.evolve.tournament,
                baseline.candidate_id,
                self.baseline.dev,
                baseline_commit=root,
                judge=self.match_judge,
                read_files=self._files_at,
            )
            self.tournament.replay(events, {r.candidate_id for r in records})
            self.tournament.rank_archive(self.archive)
        self.noise.load(self.run_dir)
        for event in events:
            if event.kind == "runs":
                self.noise.runs[event.data["commit"]] = event.data["runs"]
        self.gate, self.paired = make_gate(self.config, self.noise.estimate)
        state.best_pass_rate = self.best.measurement.dev.pass_rate if self.best.measurement.dev else 0.0
        state.evaluations = self.measurer.case_runs
        self.failing_streak: dict[str, int] = {}
        self.failing_sets = state.failing_sets
        return state, tracker

    async def _loop(self, state: RunState, tracker: LayerTracker) -> str:
        uninstall = install_sigint(state, self.report)
        self.tracker = tracker
        try:
            self._start_pipeline(state.generation + 1)
            return await self._generations(state, tracker)
        except asyncio.CancelledError:
            self.journal.event("interrupted", generation=state.generation + 1)
            self.store.update_run(self.run.run_id, status="stopped", stop_reason="interrupted (Ctrl-C twice)")
            raise KeyboardInterrupt from None
        finally:
            uninstall()
            await self._stop_pipeline()

    async def _generations(self, state: RunState, tracker: LayerTracker) -> str:
        rules = standard_rules(self.config.evolve, self.settings, self.max_generations)
        started = time.monotonic()
        state.started = started
        while True:
            reason = first_reason(rules, state)
            if reason:
                return reason
            record = await self._generation(state.generation + 1, tracker.current)
            kept = record.decision == "keep"
            # A gate's "retry" asks for another try from the same parent: it does not count toward the layer.
            promoted = False if "gate-retry" in record.flags else tracker.record(kept)
            if promoted:
                holdout = await self._verify_best(record.generation)
                self.journal.event(
                    "layer",
                    generation=record.generation,
                    layer=tracker.current,
                    exhausted=tracker.exhausted,
                    best_holdout_score=holdout,
                )
            state.generation = record.generation
            state.tokens += record.tokens
            state.cost_usd += record.cost_usd
            state.judge_calls += judge_calls(record)
            state.evaluations = self.measurer.case_runs
            state.since_keep = 0 if kept else state.since_keep + 1
            state.layers_exhausted = tracker.exhausted
            if kept:
                state.kept_scores.append(record.dev_score or 0.0)
                state.best_pass_rate = record.dev_pass_rate or 0.0
            if record.commit:
                state.content_hashes.append(self._content_hash())
            self.history.append(
                {
                    "generation": record.generation,
                    "description": record.description,
                    "decision": record.decision,
                }
            )
            self.report(generation_line(record))

    def _content_hash(self) -> str:
        digest = hashlib.sha256()
        for path in artifact_files(
            self.workdir, self.config.artifact.paths, forbid=self.config.artifact.forbid
        ):
            digest.update(path.encode() + b"\0" + (self.workdir / path).read_bytes())
        return digest.hexdigest()

    def _l3_due(self, generation: int, measurement: Measurement) -> bool:
        dev = measurement.dev
        return generation % self.settings.l3_every == 0 or bool(
            dev and dev.pass_rate > self.config.tiers.l3_when_dev_above
        )

    async def _generation(self, generation: int, layer: int) -> CandidateRecord:
        start = time.monotonic()
        await self._choose_parent(generation)
        commit, info = await self._propose(generation, layer)
        proposer_name = self.proposer.name
        if commit is None:
            record = CandidateRecord(
                run_id=self.run.run_id,
                generation=generation,
                candidate_id=candidate_id(generation),
                parent=self.parent,
                layer=layer,
                proposer=proposer_name,
                description=info["description"],
                decision="invalid",
                tokens=info["tokens"],
                cost_usd=info["cost_usd"],
                seconds=time.monotonic() - start,
                flags=info["flags"],
                citations=info["citations"],
            )
            self.last_gate = [record.description]
            self.journal.candidate(record)
            return record
        measurement = await self._measure(generation, full=False)
        gate: dict[str, Any] = {}
        keep = False
        regressions: list[str] = []
        flags = list(info.get("flags", []))
        if measurement.blocked or measurement.dev is None:
            gate = {"structure": {"passed": False, "detail": "critical L1 findings: not evaluated"}}
        else:
            noise_extra = (
                self.noise.gate_extra(
                    self.best.commit, self.best.measurement.dev or EvalResult(), self.workdir
                )
                if self.paired
                else {}
            )
            decision = await self.gate.decide(
                GateInput(
                    parent=self.best.measurement.dev or EvalResult(),
                    candidate=measurement.dev,
                    baseline=self.baseline.dev or EvalResult(),
                    parent_static=self.best.measurement.static,
                    candidate_static=measurement.static,
                    parent_size=self.best.size,
                    candidate_size=self._artifact_size(),
                    rerun=lambda case_id, times: self.measurer.rerun(case_id, times, self.workdir),
                    extra={"parent": self.best.commit, **noise_extra},
                )
            )
            gate = {name: d.model_dump(mode="json") for name, d in decision.dimensions.items()}
            keep = decision.keep
            regression = decision.dimensions.get("regression")
            regressions = list(regression.numbers.get("regressed", [])) if regression else []
            if decision.action not in ("keep", "discard"):
                flags.append(f"gate-{decision.action}")
            if keep and self._l3_due(generation, measurement):
                await self._measure_l3(measurement, generation)
                keep = self._l3_holds(measurement, gate, flags)
            if self.paired:
                progress = decision.dimensions.get("progress")
                self.journal.event(
                    "paired_test",
                    generation=generation,
                    commit=commit,
                    kept=keep,
                    **(progress.numbers if progress else {}),
                )
                self.noise.settle(
                    self.best.commit,
                    self.best.measurement.dev or EvalResult(),
                    commit if keep else None,
                    measurement.dev,
                )
                if keep:
                    self.journal.event("runs", commit=commit, runs=self.noise.runs[commit])
        if measurement.dev is not None:
            if self.config.evolve.search != "greedy":  # any evaluated candidate may become a parent
                self._measured[commit] = measurement
            self.archive.add(Node(commit, self.parent, min(1.0, max(0.0, measurement.dev.mean_score))))
            self.archive.record_child(self.parent)
        record = self._new_record(
            generation,
            commit,
            self.parent,
            layer,
            proposer_name,
            info["description"],
            "keep" if keep else "discard",
            measurement,
            time.monotonic() - start,
        )
        record.tokens += int(info.get("tokens", 0))
        record.cost_usd += float(info.get("cost_usd", 0.0))
        tokens, cost = self.noise.take_cost()  # the extra runs the paired gate asked for
        record.tokens += tokens
        record.cost_usd += cost
        record.gate, record.regressions, record.flags = gate, regressions, flags
        record.citations = list(info.get("citations", []))
        if self.tournament is not None and measurement.dev is not None:
            played = await self.tournament.play(record.candidate_id, measurement.dev, keep, commit=commit)
            self.journal.event("matches", **played)
            record.tokens += played["tokens"]
            record.cost_usd += played["cost_usd"]
            record.gate["tournament"] = {
                "passed": True,
                "detail": f"rating {played['rating']:.0f}, baseline win rate {played['baseline_win_rate']:.2f}",
                "numbers": {
                    k: played[k] for k in ("rating", "uncertainty", "baseline_win_rate", "judge_calls")
                },
            }
            self.tournament.rank_archive(self.archive)
        record.evidence = [
            c.trace_path
            for c in (measurement.dev.cases if measurement.dev else [])
            if not c.passed and c.trace_path
        ][:20]
        self.journal.candidate(record)
        if keep:
            self.git.set_branch(self.run.branch, commit)
            self._measured[commit] = measurement
            self.best = Best(commit, generation, measurement, self._artifact_size())
            self.best_record = record
            self.last_gate = []
        else:
            self.last_gate = [
                f"{k}: {v.get('detail', '')}" for k, v in gate.items() if not v.get("passed", True)
            ]
        self._track_suspects()
        self._track_failing_set(measurement)
        return record

    def _track_failing_set(self, measurement: Measurement) -> None:
        """Oscillation watches the failing-case sets that differ from the best's: a proposer landing on the
        same wrong set again and again. (A candidate that changes nothing is the plateau rule's business.)"""
        if measurement.dev is None or self.best.measurement.dev is None:
            return
        failing = frozenset(c.id for c in measurement.dev.cases if not c.passed)
        if failing != frozenset(c.id for c in self.best.measurement.dev.cases if not c.passed):
            self.failing_sets.append(failing)

    def _l3_holds(self, measurement: Measurement, gate: dict[str, Any], flags: list[str]) -> bool:
        """L3: the regression split must not lose a case the best candidate passed; a holdout far below dev
        is logged as overfitting."""
        best_regression = self.best.measurement.regression or self.baseline.regression
        if measurement.regression and best_regression:
            before = {c.id for c in best_regression.cases if c.passed}
            lost = sorted(c.id for c in measurement.regression.cases if c.id in before and not c.passed)
            gate["l3_regression"] = {
                "passed": not lost,
                # Count only: the detail reaches the next proposal, and regression cases are hidden from it.
                "detail": f"the regression split lost {len(lost)} cases"
                if lost
                else "regression split holds",
                "numbers": {"lost": lost},
            }
            if lost:
                return False
        dev, holdout = measurement.dev, measurement.holdout
        if dev and holdout and holdout.pass_rate < dev.pass_rate - OVERFIT_GAP:
            flags.append("overfitting")
        return True

    def _track_suspects(self) -> None:
        """A dev case the best candidate still fails, generation after generation, may be a wrong case."""
        dev = self.best.measurement.dev
        if dev is None:
            return
        for case in dev.cases:
            self.failing_streak[case.id] = 0 if case.passed else self.failing_streak.get(case.id, 0) + 1

    @property
    def suspects(self) -> list[str]:
        return sorted(cid for cid, streak in self.failing_streak.items() if streak >= SUSPECT_AFTER)

    def _new_record(
        self,
        generation: int,
        commit: str | None,
        parent: str | None,
        layer: int,
        proposer: str,
        description: str,
        decision: str,
        m: Measurement,
        seconds: float,
    ) -> CandidateRecord:
        best_dev = self.best.measurement.dev if generation else None
        return m.to_record(
            run_id=self.run.run_id,
            generation=generation,
            commit=commit,
            parent=parent,
            layer=layer,
            proposer=proposer,
            description=description,
            decision=decision,
            seconds=seconds,
            parent_dev=best_dev,
        )

    async def _verify_best(self, generation: int) -> float | None:
        """L3 on the best candidate (before a layer promotion and at the end), unless it already ran; the scores
        are logged for the best's record, which was written before they were measured."""
        best = self.best
        if best.measurement.holdout is None and (self.cases[Split.HOLDOUT] or self.cases[Split.REGRESSION]):
            self.git.reset_worktree(self.worktree, best.commit)
            await self._measure_l3(best.measurement, best.generation)
            holdout, regression = best.measurement.holdout, best.measurement.regression
            self.journal.verified(
                Verification(
                    candidate_id=self.best_record.candidate_id,
                    holdout_score=holdout.mean_score if holdout else None,
                    regression_pass_rate=regression.pass_rate if regression else None,
                )
            )
        return best.measurement.holdout.mean_score if best.measurement.holdout else None

    async def _finish(self, state: RunState, reason: str, started: float) -> Outcome:
        best = self.best
        await self._verify_best(state.generation)
        holdout = best.measurement.holdout
        status = "stopped" if state.interrupted or reason == "STOP file found" else "finished"
        self.journal.event(
            "finished",
            reason=reason,
            best=best.commit,
            generation=state.generation,
            best_dev_score=best.measurement.dev.mean_score if best.measurement.dev else None,
            best_holdout_score=holdout.mean_score if holdout else None,
            suspects=self.suspects,
        )
        self.store.update_run(self.run.run_id, status=status, stop_reason=reason, best=best.commit)
        records = self.journal.candidates()
        return Outcome(
            run_id=self.run.run_id,
            stop_reason=reason,
            generations=state.generation,
            baseline=records[0],
            best=best_candidate(records),
            case_runs=self.measurer.case_runs,
            seconds=time.monotonic() - started,
            suspects=self.suspects,
        )
