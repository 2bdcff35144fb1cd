"""Building the proposer configured in ``evolve.proposer``, and the loop's proposing steps: choosing the
parent, making and committing one proposal, and the pipeline of proposals made ahead (a mixin of
``Evolution``, which owns the state these methods use)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.config import AssayConfig
from assay.history.git import Git
from assay.history.records import candidate_id
from assay.history.scope import artifact_files, out_of_scope
from assay.loop.pipeline import ProposalPipeline
from assay.model import Split
from assay.proposers import MutateProposer, Proposer
from assay.proposers.context import build_view
from assay.search.archive import accuracy_ranks

if TYPE_CHECKING:
    from assay.history.records import RunRecord
    from assay.loop.journal import Journal
    from assay.loop.layers import LayerTracker
    from assay.loop.measure import Measurement
    from assay.model import Case
    from assay.proposers.redaction import Redactor
    from assay.search import Archive, ParentSelector


def make_proposer(config: AssayConfig, *, use_cache: bool = True) -> Proposer:
    """The proposer named in ``evolve.proposer``."""
    spec = config.evolve.proposer
    if spec.type == "mutate":
        return MutateProposer(seed=config.evolve.seed)
    if spec.type == "llm":
        from assay.proposers.llm import LLMProposer

        assert spec.llm is not None
        return LLMProposer(spec.llm, cache_dir=config.data_path / "cache" / "llm", use_cache=use_cache)
    from assay.proposers.agent import AgentProposer

    assert spec.command is not None
    # The agent works in the worktree, which also holds the cases and the config: hide them while it runs.
    hidden = [*config.cases.files, *config.artifact.forbid]
    if config.path is not None:
        hidden.append(config.path.name)
    return AgentProposer(spec.command, timeout=spec.timeout, env_allow=spec.env_allow, hide=hidden)


class Proposing:
    """The proposing half of the loop. ``Evolution`` provides the attributes annotated here."""

    config: AssayConfig
    git: Git
    prefix: str
    run: RunRecord
    run_dir: Path
    journal: Journal
    worktree: Path
    proposer: Proposer
    selector: ParentSelector
    archive: Archive
    redactor: Redactor
    cases: dict[Split, list[Case]]
    history: list[dict[str, Any]]
    last_gate: list[str]
    tracker: LayerTracker
    best: Any
    parent: str
    parent_measurement: Measurement
    pending: dict[str, Any] | None
    pipeline: ProposalPipeline | None
    proposals_tree: Path | None
    _measured: dict[str, Measurement]

    async def _measured_at(self, commit: str, generation: int) -> Measurement:
        raise NotImplementedError

    def _files_at(self, commit: str) -> dict[str, str]:
        """The artifact files of a commit (path relative to the artifact root -> text), for a judge."""
        listed = self.git.run("ls-tree", "-r", "--name-only", commit, "--", self.prefix or ".").stdout
        files: dict[str, str] = {}
        for path in listed.splitlines():
            if out_of_scope(
                [path], self.config.artifact.paths, self.config.artifact.forbid, artifact_prefix=self.prefix
            ):
                continue
            text = self.git.show_file(commit, path)
            if text is not None:
                files[path[len(self.prefix) + 1 :] if self.prefix else path] = text
        return files

    def _start_pipeline(self, first: int) -> None:
        """With ``evolve.pipeline`` > 1, proposals are made ahead in their own worktree."""
        depth = self.config.evolve.pipeline_depth
        if depth <= 1:
            return
        self.proposals_tree = self.config.data_path / "worktrees" / f"{self.run.run_id}-proposals"
        self.git.remove_worktree(self.proposals_tree)
        self.git.add_worktree(self.proposals_tree, self.best.commit)
        self.pipeline = ProposalPipeline(self._produce, depth=depth, first=first)
        self.pipeline.start()

    async def _stop_pipeline(self) -> None:
        """Proposals made but never evaluated stay reachable under their refs and are logged as dropped."""
        if self.pipeline is None:
            return
        dropped = await self.pipeline.close()
        if dropped:
            self.journal.event(
                "dropped", proposals=[q.number for q in dropped], commits=[q.commit for q in dropped]
            )
        self.pipeline = None
        if self.proposals_tree is not None:
            self.git.remove_worktree(self.proposals_tree)

    async def _propose(self, generation: int, layer: int) -> tuple[str | None, dict[str, Any]]:
        """Ask the proposer for one change on top of the parent and commit it (or take the pending commit of a
        killed run, or the next proposal of the pipeline).

        Returns the commit (None when the proposal failed or changed nothing) and what to log about it."""
        pending, self.pending = self.pending, None
        if pending is not None and pending.get("generation") == generation:
            if pending.get("parent") and pending["parent"] != getattr(self, "parent", None):
                self.parent = pending["parent"]
                self.parent_measurement = await self._measured_at(self.parent, generation)
            self.git.reset_worktree(self.worktree, pending["commit"])
            return pending["commit"], pending
        if self.pipeline is not None:
            queued = await self.pipeline.take()
            commit, info = queued.commit, queued.info
            self.parent = info["parent"]
            self.parent_measurement = await self._measured_at(self.parent, generation)
            info.update(generation=generation, proposal=queued.number)
            if commit is not None:
                self.git.reset_worktree(self.worktree, commit)
        else:
            commit, info = await self._make_proposal(
                self.worktree, self.parent, self.parent_measurement, generation, layer
            )
        if commit is None:
            return None, info
        self.git.set_ref(f"refs/assay/{self.run.run_id}/{candidate_id(generation)}", commit)
        info["commit"] = commit
        self.journal.event("committed", **info)
        return commit, info

    async def _make_proposal(
        self,
        worktree: Path,
        parent: str,
        parent_measurement: Measurement,
        number: int,
        layer: int,
        *,
        label: str = "gen",
    ) -> tuple[str | None, dict[str, Any]]:
        """One proposal on top of ``parent`` in ``worktree``, committed there; ``number`` seeds the mutate
        proposer and names the commit (``assay gen 12`` or ``assay proposal 12``)."""
        workdir = worktree / self.prefix if self.prefix else worktree
        self.git.reset_worktree(worktree, parent)
        paths = artifact_files(workdir, self.config.artifact.paths, forbid=self.config.artifact.forbid)
        dev = parent_measurement.dev
        view = build_view(
            artifact={p: (workdir / p).read_text(encoding="utf-8", errors="replace") for p in paths},
            layer=layer,
            dev_results=[(c, r) for c, r in zip(self.cases[Split.DEV], dev.cases, strict=True)]
            if dev
            else [],
            history=self.history[-20:],
            last_gate=[self.redactor.redact(r) for r in self.last_gate],
            redactor=self.redactor,
            trace_dir=self.run_dir / "proposer" / f"{label}-{number:03d}",
        )
        if isinstance(self.proposer, MutateProposer):
            self.proposer.generation = number
        proposal = await self.proposer.propose(view, workdir, editable=list(self.config.artifact.paths))
        info: dict[str, Any] = {
            "generation": number,
            "layer": layer,
            "description": proposal.description or proposal.error or "",
            "citations": proposal.citations,
            "tokens": proposal.tokens_in + proposal.tokens_out,
            "cost_usd": proposal.cost_usd,
            "parent": parent,
            "flags": [],
        }
        if not proposal.ok:
            info["description"] = f"proposal failed: {proposal.error}"
            return None, info
        changed = Git(worktree).dirty_paths(ignore=())
        outside = out_of_scope(
            changed, self.config.artifact.paths, self.config.artifact.forbid, artifact_prefix=self.prefix
        )
        if outside:
            self.git.restore_paths(worktree, parent, outside)
            info["flags"].append("scope-violation")
            info["violations"] = outside
        if len(set(changed) - set(outside)) > self.config.evolve.max_files_changed:
            info["flags"].append("many-files")
        message = f"assay {label} {number} L{layer} ({self.proposer.name}): {info['description']}"[:200]
        commit = self.git.commit_all(worktree, message)
        if commit is None:
            info["description"] = f"no change: {info['description']}"
            return None, info
        return commit, info

    async def _produce(self, number: int) -> tuple[float, str | None, dict[str, Any]]:
        """The pipeline's proposal ``number``: a parent sampled from the archive as it is now (the candidates
        still being evaluated are not in it yet), a proposal in the proposals worktree, and its priority in
        the evaluation queue: the parent's rating rank plus accuracy rank (SIFT's r_bt + r_acc)."""
        rng = random.Random(f"{self.config.evolve.seed}:proposal:{number}")
        parent = self.selector.choose(self.archive, rng)
        self.archive.record_choice(parent)
        measurement = self._measured.get(parent)
        if measurement is None:  # only after a resume; build on the best instead of re-measuring here
            parent, measurement = self.best.commit, self.best.measurement
        assert self.proposals_tree is not None
        commit, info = await self._make_proposal(
            self.proposals_tree, parent, measurement, number, self.tracker.current, label="proposal"
        )
        if commit is not None:
            self.git.set_ref(f"refs/assay/{self.run.run_id}/proposal-{number:04d}", commit)
            self.journal.event("proposed", proposal=number, commit=commit, parent=parent)
        acc = accuracy_ranks(self.archive)[parent]
        rank = self.archive.get(parent).bt_rank
        return float(acc + (acc if rank is None else rank)), commit, info

    async def _choose_parent(self, generation: int) -> None:
        """The commit to build on: the best candidate (greedy), or one the search strategy samples from the
        archive of every evaluated candidate (ranked, dgm)."""
        if self.pipeline is not None:
            return  # the pipeline chose the parent when it made the proposal
        if self.config.evolve.search == "greedy":
            self.parent, self.parent_measurement = self.best.commit, self.best.measurement
            return
        rng = random.Random(f"{self.config.evolve.seed}:parent:{generation}")
        self.parent = self.selector.choose(self.archive, rng)
        self.archive.record_choice(self.parent)
        self.parent_measurement = await self._measured_at(self.parent, generation)
