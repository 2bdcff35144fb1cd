"""Inert sites: a kept candidate is adopted without the changes that change no dev case's result.

Once the gate keeps a candidate that changed two or more things of its parent, one of them at least a site
(:func:`changed_sites`: a number, or a run of lines), its dev cases run again with each of those sites put back as
the parent had it (when they are more than :data:`MAX_TRIALS`, halves of them, halved again where a half changes
something): a site or a group whose reversal leaves every case's pass, score and output as they were is reverted.
At most :data:`MAX_TRIALS` trials, each on one case the candidate changed against its parent first, then on the
others it changed, then on the rest (a change that matters costs few case runs). What the generation then decides
on is the candidate without every site so found: a default nobody passes retuned, a constant in a branch no case
reaches.
A site whose reversal would lengthen the code (lines the candidate deleted or shortened) is not tried: the gate
counts a simplification. The trials, with what they spent, are logged as one ``trimmed`` event, so a resumed run
does not run them again. Not tried where results are noisy, nor on a candidate that played tournament matches
before the gate (screening, a tournament-fed gate): they rated it as proposed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from assay.evaluation.evaluator import EvalResult
from assay.fsutil import restore_marks, written_marks
from assay.history.records import candidate_id
from assay.loop.context import LoopContext
from assay.loop.events import Spend, Trimmed
from assay.loop.measure import OUTPUT_KEPT
from assay.loop.proposing import places
from assay.loop.state import LoopState, Pending
from assay.model import CaseResult, Split
from assay.proposers.tune.sites import number_sites, write_values

MAX_TRIALS = 12  # reversals tried on one kept candidate
# Lines at least this similar (difflib's ratio) are one line changed, not one removed and another added.
SIMILAR = 0.6
TOKEN = re.compile(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\w+|[^\w\s]")


@dataclass(frozen=True)
class ChangedSite:
    """One change of a candidate's file against its parent: a number (``score.py:priority#2``), put back by writing
    the parent's value ``old``, or a run of lines (``score.py:12-14``, new lines), put back as the parent's lines
    ``lines[0]:lines[1]`` in place of the candidate's ``lines[2]:lines[3]``."""

    name: str
    path: str
    old: int | float | None = None
    lines: tuple[int, int, int, int] = (0, 0, 0, 0)


def changed_sites(parent: Mapping[str, str], candidate: Mapping[str, str]) -> list[ChangedSite]:
    """Where ``candidate``'s files (relative path -> text) changed ``parent``'s, by path: the numbers of a file
    that changed nothing else (:func:`~assay.proposers.tune.sites.number_sites`), else its runs of changed lines
    (a line changed a run of its own: :func:`_paired`), but for runs of fewer tokens than the parent's lines."""
    found: list[ChangedSite] = []
    for path in sorted(candidate):
        old, new = parent.get(path), candidate[path]
        if old is not None and old != new:
            found += _numbers(path, old, new) or _lines(path, old, new)
    return found


def _numbers(path: str, old: str, new: str) -> list[ChangedSite]:
    before = {site.name: site.value for site in number_sites(path, old)}
    after = number_sites(path, new)
    if [site.name for site in after] != list(before):
        return []
    changed = {site.name: before[site.name] for site in after if site.value != before[site.name]}
    try:
        same = write_values({path: new}, after, changed).get(path) == old
    except ValueError:
        return []
    return [ChangedSite(name, path, old=value) for name, value in changed.items()] if same else []


def _lines(path: str, old: str, new: str) -> list[ChangedSite]:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    found = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for i, i_end, j, j_end in _paired(a, b, i1, i2, j1, j2) if tag != "equal" else []:
            if len(TOKEN.findall("".join(b[j:j_end]))) >= len(TOKEN.findall("".join(a[i:i_end]))):
                where = f"{j + 1}" if j_end - j <= 1 else f"{j + 1}-{j_end}"
                found.append(ChangedSite(f"{path}:{where}", path, lines=(i, i_end, j, j_end)))
    return found


def _paired(
    a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[int, int, int, int]]:
    """The lines ``a[i1:i2]`` replaced by ``b[j1:j2]`` as runs: each line paired with its most similar one on the
    other side (as ``difflib.Differ`` pairs them), the lines between two pairs a run of their own."""
    if i1 == i2 and j1 == j2:
        return []
    pairs = [(SequenceMatcher(None, a[i], b[j]).ratio(), i, j) for i in range(i1, i2) for j in range(j1, j2)]
    ratio, i, j = max(pairs, default=(0.0, i1, j1))
    if ratio < SIMILAR:
        return [(i1, i2, j1, j2)]
    return [*_paired(a, b, i1, i, j1, j), (i, i + 1, j, j + 1), *_paired(a, b, i + 1, i2, j + 1, j2)]


def reverted(
    parent: Mapping[str, str], candidate: Mapping[str, str], sites: Sequence[ChangedSite]
) -> dict[str, str]:
    """The files of ``candidate`` that ``sites`` are in, with those sites as ``parent`` has them."""
    files: dict[str, str] = {}
    for path in sorted({site.path for site in sites}):
        mine, text = [s for s in sites if s.path == path], candidate[path]
        numbers = {s.name: s.old for s in mine if s.old is not None}
        if numbers:
            files |= write_values({path: text}, number_sites(path, text), numbers)
            continue
        lines, old = text.splitlines(keepends=True), parent[path].splitlines(keepends=True)
        for site in sorted(mine, key=lambda s: -s.lines[2]):
            i, i_end, j, j_end = site.lines
            lines[j:j_end] = old[i:i_end]
        files[path] = "".join(lines)
    return files


def _result(case: CaseResult) -> tuple[bool, float, str]:
    return case.passed, case.score, case.output.text[:OUTPUT_KEPT]  # as the event log keeps an output


async def trim(ctx: LoopContext, state: LoopState, pending: Pending) -> None:
    """Revert the inert sites of the kept ``pending`` candidate and log the trials (see the module docstring);
    nothing is tried, or logged, when it changed no site that may be tried, or one site and nothing else."""
    proposal, measured = pending.committed.proposal, pending.measured
    noisy = state.spend.noise is not None and not state.spend.noise.deterministic
    played = pending.screened is not None or pending.matches is not None  # on the commit as proposed
    if measured is None or measured.dev is None or noisy or played:
        return
    parent, files = ctx.files_at(proposal.parent), ctx.files_at(pending.commit)
    sites = changed_sites(parent, files)
    if not sites or (len(sites) == 1 and {**files, **reverted(parent, files, sites)} == dict(parent)):
        return  # reverting its one change gives back the parent, which the gate has just measured
    known = state.lineage.measurement(proposal.parent)
    was = {c.id: _result(c) for c in (known.dev.cases if known and known.dev else [])}
    first = [c.id for c in measured.dev.cases if was.get(c.id) != _result(c)]
    order = [first[:1], first[1:], [c.id for c in measured.dev.cases if c.id not in first]]
    runs, found, trials = list[EvalResult](), list[ChangedSite](), 0
    # One site at a time where they are few: most changes a search keeps matter, and one that matters costs a
    # single case run, where halving costs two trials per site that matters. Halves where they are many.
    halves = [sites[len(sites) // 2 :], sites[: len(sites) // 2]]
    groups = (
        [[site] for site in reversed(sites)] if len(sites) <= MAX_TRIALS else halves
    )  # the first goes first
    while groups and trials < MAX_TRIALS:
        group, trials = groups.pop(), trials + 1
        if await _same(
            ctx, pending.commit, reverted(parent, files, [*found, *group]), measured.dev, order, runs
        ):
            found += group
        elif len(group) > 1:
            groups += [group[len(group) // 2 :], group[: len(group) // 2]]
    # Counted from the results: candidates measured ahead may be running cases meanwhile.
    spent, names, generation = Spend.of(*runs), [site.name for site in found], pending.committed.generation
    ctx.report(
        f"{candidate_id(generation)}: reverted {len(found)} of {len(sites)} changed sites that changed no dev"
        f" case's result ({trials} trials, {spent.case_runs} case runs)"
    )
    _write_over(ctx, pending.commit, reverted(parent, files, found))
    if not found:
        ctx.emit(state, Trimmed(generation=generation, spent=spent))
        return
    commit = ctx.git.commit_all(
        ctx.worktree, f"assay gen {generation}: without its inert sites\n\n" + "\n".join(names)
    )
    assert commit is not None, "a reverted site changes the candidate"
    ctx.git.set_ref(f"refs/assay/{ctx.run.run_id}/{candidate_id(generation)}", commit)
    identity = ctx.artifact_identity(ctx.workdir)
    trimmed = proposal.model_copy(
        update={
            "commit": commit,
            "tree": identity.tree,
            "description": f"{proposal.description} (reverted as inert: {', '.join(names)})",
            "sites": [site for site in proposal.sites if site not in names],
            "places": places(ctx, proposal.parent, commit),
        }
    )
    remeasured = measured.model_copy(
        update={
            "commit": commit,
            "static": ctx.parts.measurer.static(ctx.workdir),
            **identity._asdict(),
            "spent": Spend(),
        }
    )
    ctx.emit(
        state,
        Trimmed(generation=generation, reverted=names, proposal=trimmed, measured=remeasured, spent=spent),
    )


async def _same(
    ctx: LoopContext,
    commit: str,
    files: dict[str, str],
    dev: EvalResult,
    order: list[list[str]],
    runs: list[EvalResult],
) -> bool:
    """Whether ``commit`` with ``files`` written over it passes L1 and gives each dev case the result it has in
    ``dev``, running the cases group by group (``order``) until one differs; the runs are added to ``runs``."""
    _write_over(ctx, commit, files)
    measurer = ctx.parts.measurer
    if not measurer.static(ctx.workdir).passed:
        return False
    expected = {c.id: _result(c) for c in dev.cases}
    for group in order:
        result = await measurer.split(Split.DEV, ctx.workdir, None, only=group)
        runs += [result] if result is not None else []
        if result is not None and any(_result(c) != expected[c.id] for c in result.cases):
            return False
    return True


def _write_over(ctx: LoopContext, commit: str, files: dict[str, str]) -> None:
    """The run's worktree at ``commit`` with ``files`` (relative to the artifact root) written over it, each with
    the line ends and byte-order mark it has there (git's text is read with universal newlines)."""
    ctx.git.reset_worktree(ctx.worktree, commit)
    marked = written_marks(ctx.workdir, list(files))
    for path, text in files.items():
        (ctx.workdir / path).write_text(text, encoding="utf-8")
    restore_marks(ctx.workdir, marked)
