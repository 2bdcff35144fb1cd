"""The proposing steps of a generation: building the configured proposer, choosing the parent, and making one
proposal on top of it in a worktree (committed there when it changed something inside the editable scope).

A proposal is made from a :class:`Basis`: the state after some decision (for a generation, the one before it;
for a proposal made ahead by the pipeline, an earlier one), so what is proposed depends on the events only.
"""

from __future__ import annotations

import ast
import copy
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assay.evaluation.evaluator import EvalResult
from assay.evaluation.traces import read_trace
from assay.fsutil import artifact_text, has_marks, restore_marks
from assay.history.git import Git
from assay.layer_names import layer_name
from assay.loop.context import LoopContext
from assay.loop.events import ProposalMade
from assay.loop.flags import Flag
from assay.loop.measure import OUTPUT_KEPT
from assay.loop.state import HistoryItem, LoopState, Retry
from assay.model import Case, Split
from assay.proposers.base import CaseFailure, HistoryEntry, Proposal, ProposerView, RetryNote
from assay.proposers.budget import default_context_tokens
from assay.proposers.context import build_view, describe_failure
from assay.proposers.redaction import Redactor
from assay.search import Archive, GreedySelector
from assay.search.archive import accuracy_ranks

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass
class Basis:
    """What a proposal is made from: the state right after decision ``after`` (a copy)."""

    after: int
    archive: Archive
    layer: int
    history: list[HistoryItem]
    last_gate: list[str]
    best: str
    retry: Retry | None = None

    @classmethod
    def of(cls, state: LoopState) -> Basis:
        assert state.lineage.best is not None
        return cls(
            after=state.lineage.generation,
            archive=copy.deepcopy(state.lineage.archive),
            layer=state.feedback.tracker.current,
            history=list(state.feedback.history),
            last_gate=list(state.feedback.last_gate),
            best=state.lineage.best.commit,
            retry=state.feedback.retry,
        )


def choose_parent(ctx: LoopContext, basis: Basis, key: str) -> tuple[str, bool]:
    """The commit to build on and whether the search sampled it: the best candidate (the greedy selector), or
    one the parent selector samples from the archive of every evaluated candidate (ranked, dgm, or a selector
    given as an object), seeded by ``key``; the best while the run tidies before it stops."""
    if isinstance(ctx.parts.selector, GreedySelector) or ctx.tidying is not None:
        return basis.best, False
    rng = random.Random(f"{ctx.config.evolve.seed}:{key}")
    return ctx.parts.selector.choose(basis.archive, rng), True


def priority(basis: Basis, parent: str) -> float:
    """A proposal's place in the pipeline's queue, lower first: its parent's rating rank plus accuracy rank
    (SIFT's r_bt + r_acc; the accuracy rank stands in for a parent never rated)."""
    acc = accuracy_ranks(basis.archive)[parent]
    rank = basis.archive.get(parent).bt_rank
    return float(acc + (acc if rank is None else rank))


async def make_proposal(
    ctx: LoopContext,
    state: LoopState,
    basis: Basis,
    *,
    worktree: Path,
    parent: str,
    number: int,
    label: str = "gen",
) -> ProposalMade:
    """One new proposal on top of ``parent`` in ``worktree``, committed there; ``number`` seeds the offline
    proposers (``view.generation``) and names the commit (``assay gen 12`` or ``assay proposal 12``). While the
    run tidies before it stops, the proposer's :meth:`~assay.proposers.Proposer.tidy` makes it.

    Never a candidate seen before: a draw whose fingerprint (formatting and comments ignored) equals that of
    any candidate proposed or measured so far is thrown away and drawn again, up to the proposer's
    ``redraws`` per layer; a layer where nothing applies, or where every draw repeated, gives way to the next
    one (then the earlier ones). Only when no layer gives anything new does the proposal fail. Which trees are
    "seen" depends on the events only: every proposal numbered before this one, and the measured ones."""
    config, git = ctx.config, ctx.git
    prefix = ctx.parts.prefix
    workdir = worktree / prefix if prefix else worktree
    git.reset_worktree(worktree, parent)
    files = ctx.artifact_bytes(workdir)
    artifact = {path: artifact_text(data) for path, data in files.items()}
    # Proposers edit that text: a file's CRLF ends and byte-order mark are put back on what they rewrite.
    marked = {path: data for path, data in files.items() if has_marks(data)}
    seen = set(state.pipeline.trees)
    first = _view(ctx, state, basis, artifact, parent, number, label)
    proposer = ctx.parts.proposer
    make = proposer.tidy if ctx.tidying is not None else proposer.propose
    redrawn: list[str] = []
    tokens, cost = 0, 0.0
    made: Proposal | None = None
    for layer in _layer_order(config.evolve.layers, basis.layer):
        for _attempt in range(max(1, proposer.redraws)):
            git.reset_worktree(worktree, parent)
            view = replace(
                first, layer=layer, attempt=len(redrawn), last_gate=first.last_gate + _repeat_note(redrawn)
            )
            made = await make(view, workdir, editable=list(config.artifact.paths))
            restore_marks(workdir, marked)
            tokens, cost = tokens + made.tokens_in + made.tokens_out, cost + made.cost_usd
            if not made.ok:
                if made.exhausted:
                    redrawn.append(f"{layer_name(layer)}: {made.error}")
                    break
                return _failed(basis, parent, proposer.name, made, tokens, cost, redrawn)
            changed = Git(worktree).dirty_paths(ignore=())
            outside = out_of_scope_paths(ctx, changed)
            if outside:
                git.restore_paths(worktree, parent, outside)
            tree = ctx.tree(workdir)
            if tree in seen:
                redrawn.append(f"{layer_name(layer)} repeat: {made.description}")
                continue
            flags: list[str] = [Flag.SCOPE_VIOLATION] if outside else []
            if len(set(changed) - set(outside)) > config.evolve.max_files_changed:
                flags.append(Flag.MANY_FILES)
            name = made.via or proposer.name
            description = made.description or made.error or ""
            title = f"assay {label} {number} {layer_name(layer)}"
            commit = git.commit_all(worktree, f"{title} ({name}): {description}"[:200])
            return ProposalMade(
                parent=parent,
                layer=layer,
                proposer=name,
                operator=made.operator or name,
                sites=list(made.sites),
                places=places(ctx, parent, commit) if commit else [],
                description=description if commit else f"no change: {description}",
                citations=made.citations,
                tokens=tokens,
                cost_usd=cost,
                tree=tree,
                redrawn=redrawn,
                commit=commit,
                flags=flags,
                violations=outside,
            )
    assert made is not None
    return _failed(
        basis,
        parent,
        proposer.name,
        made,
        tokens,
        cost,
        redrawn,
        description="no new candidate: every layer's draws repeated earlier candidates or found nothing to change",
        flags=[Flag.NO_NEW_CANDIDATE],
    )


def places(ctx: LoopContext, parent: str, commit: str) -> list[str]:
    """Where ``commit`` changed its parent's artifact: ``path:line`` or ``path:first-last`` per hunk of the diff
    (new lines), with the Python function the change is in (``priority.py:12-14 (priority)``)."""
    diff = ctx.git.run("diff", "--unified=0", "--no-color", parent, commit).stdout
    found: list[str] = []
    for chunk in diff.split("diff --git ")[1:]:
        head = re.search(r"^\+\+\+ (?:b/)?(.+)$", chunk, re.M)
        if head is None or head.group(1) == "/dev/null":
            continue
        path = head.group(1)
        shown = path[len(ctx.parts.prefix) + 1 :] if ctx.parts.prefix else path
        functions = _functions(ctx.git.show_file(commit, path) or "") if path.endswith(".py") else []
        for match in _HUNK.finditer(chunk):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            last = start + max(count, 1) - 1
            where = f"{shown}:{start}" if last == start else f"{shown}:{start}-{last}"
            inside = [name for name, first, end in functions if first <= start <= end]
            found.append(f"{where} ({inside[-1]})" if inside else where)
    return found


def _functions(text: str) -> list[tuple[str, int, int]]:
    """The functions and classes of Python source: (qualified name, first line, last line), outer first."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{scope}.{child.name}" if scope else child.name
                found.append((name, child.lineno, child.end_lineno or child.lineno))
                visit(child, name)

    visit(tree, "")
    return found


def tidy_due(ctx: LoopContext, state: LoopState) -> bool:
    """Whether the proposer would tidy the best (:meth:`~assay.proposers.Proposer.tidies`), asked with the view
    the next proposal would get (the best as parent, at the current layer)."""
    basis = Basis.of(state)
    prefix = ctx.parts.prefix
    ctx.git.reset_worktree(ctx.worktree, basis.best)
    artifact = ctx.artifact_texts(ctx.worktree / prefix if prefix else ctx.worktree)
    number = state.lineage.generation + 1
    return ctx.parts.proposer.tidies(_view(ctx, state, basis, artifact, basis.best, number, "gen"))


def _layer_order(layers: Sequence[int], current: int) -> list[int]:
    """The current layer, the later ones, then the earlier ones."""
    at = layers.index(current) if current in layers else 0
    return [*layers[at:], *layers[:at]]


def _repeat_note(redrawn: list[str]) -> list[str]:
    if not redrawn:
        return []
    return [
        f"your last {len(redrawn)} proposals repeated earlier candidates or changed nothing: propose something new"
    ]


def _view(
    ctx: LoopContext,
    state: LoopState,
    basis: Basis,
    artifact: dict[str, str],
    parent: str,
    number: int,
    label: str,
) -> ProposerView:
    config = ctx.config
    measurement = state.lineage.measurement(parent)
    dev = with_full_outputs(measurement.dev if measurement else None)
    cases = ctx.parts.cases[Split.DEV]
    redactor = ctx.parts.redactor
    settings = config.evolve.proposer
    prefix = ctx.parts.prefix
    view = build_view(
        artifact=artifact,
        layer=basis.layer,
        dev_results=list(zip(cases, dev.cases, strict=True)) if dev else [],
        history=[
            HistoryEntry(
                h.generation,
                h.description,
                h.decision,
                h.proposer,
                delta=h.delta,
                same_parent=h.parent == parent,
                operator=h.operator,
                commit=h.commit or "",
                parent=h.parent or "",
                score=h.score,
                best_score=h.best_score,
                crashed=h.crashed,
                screened=h.screened,
                sites=h.sites,
            )
            for h in basis.history
        ],
        last_gate=[redactor.redact(r) for r in basis.last_gate],
        redactor=redactor,
        trace_dir=ctx.files.run_dir / "proposer" / f"{label}-{number:03d}",
        show_judge_reasons=settings.show_judge_reasons,
        context_tokens=settings.context_tokens
        or default_context_tokens(settings.llm.model if settings.llm else None),
        regressed=regressed_cases(state, dev),
        best_diff=best_diff(ctx, state, basis, [f"{prefix}/{p}" if prefix else p for p in artifact]),
    )
    return replace(
        view,
        generation=number,
        parent=parent,
        parent_score=dev.mean_score if dev else None,
        retry=retry_note(basis.retry, cases, redactor),
        artifact_at=ctx.files_at,
    )


def _failed(
    basis: Basis,
    parent: str,
    name: str,
    made: Proposal,
    tokens: int,
    cost: float,
    redrawn: list[str],
    *,
    description: str | None = None,
    flags: Sequence[str] = (),
) -> ProposalMade:
    return ProposalMade(
        parent=parent,
        layer=basis.layer,
        proposer=made.via or name,
        operator=made.operator or made.via or name,
        description=description or f"proposal failed: {made.error}",
        citations=made.citations,
        tokens=tokens,
        cost_usd=cost,
        redrawn=redrawn,
        flags=list(flags),
    )


def with_full_outputs(dev: EvalResult | None) -> EvalResult | None:
    """``dev`` with each output the event log cut (to :data:`OUTPUT_KEPT` characters) read back whole from
    its trace file, so the proposer can be shown its end; an output whose trace is gone stays cut."""
    if dev is None:
        return None
    cases = []
    for result in dev.cases:
        if result.trace_path and len(result.output.text) >= OUTPUT_KEPT:
            try:
                output = read_trace(Path(result.trace_path)).result.output
            except (OSError, ValueError):
                output = result.output
            result = result.model_copy(update={"output": output})
        cases.append(result)
    return dev.model_copy(update={"cases": cases})


def regressed_cases(state: LoopState, dev: EvalResult | None) -> set[str]:
    """The dev cases the parent fails that the baseline passed."""
    base = state.lineage.baseline.dev if state.lineage.baseline is not None else None
    if dev is None or base is None:
        return set()
    passed = {r.id for r in base.cases if r.passed}
    return {r.id for r in dev.cases if not r.passed and r.id in passed}


def best_diff(ctx: LoopContext, state: LoopState, basis: Basis, paths: list[str]) -> str:
    """The best candidate's diff against the baseline over the artifact's files ('' when they are the same)."""
    if state.lineage.baseline is None or state.lineage.baseline.commit == basis.best or not paths:
        return ""
    return ctx.git.diff(state.lineage.baseline.commit, basis.best, paths)


def retry_note(retry: Retry | None, cases: list[Case], redactor: Redactor) -> RetryNote | None:
    """What the proposer is told of an attempt the gate asked to retry (failures described neutrally)."""
    if retry is None:
        return None
    results = {r.id: r for r in (retry.dev.cases if retry.dev else [])}
    failures = [
        CaseFailure(redactor.redact(case.id), redactor.redact(describe_failure(results[case.id], redactor)))
        for case in cases
        if case.id in results and not results[case.id].passed
    ]
    return RetryNote(score=retry.score, best_score=retry.best_score, needed=retry.needed, failures=failures)


def out_of_scope_paths(ctx: LoopContext, changed: list[str]) -> list[str]:
    """The changed paths outside the editable scope (or inside the read-only one)."""
    from assay.history.scope import out_of_scope

    artifact = ctx.config.artifact
    return out_of_scope(changed, artifact.paths, artifact.forbid, artifact_prefix=ctx.parts.prefix)
