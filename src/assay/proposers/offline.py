"""The offline proposers (no LLM): ``mutate`` with the built-in operators of :mod:`assay.proposers.mutate`, and
the default :class:`OfflineProposer`, which alternates those structural edits with numeric tuning."""

from __future__ import annotations

import ast
import random
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

from assay.config import AssayConfig, ParameterSpec
from assay.errors import ConfigError
from assay.layer_names import layer_name
from assay.proposers.base import PROPOSERS, HistoryEntry, Proposal, Proposer, ProposerView
from assay.proposers.credit import Credit
from assay.proposers.mutate import Mutation, mutate
from assay.proposers.mutate.engine import LAYERS, OPERATORS, file_kind
from assay.proposers.mutate.python_arrays import arrays_assumed, numpy_name
from assay.proposers.mutate.python_combine_ops import FORMS
from assay.proposers.mutate.python_crossover import crossover
from assay.proposers.mutate.python_grow_ops import GUARD_HEAD, flipped, turned_round
from assay.proposers.mutate.python_pairing import pairing
from assay.proposers.mutate.python_prune import PRUNE_NOTE, added_branches, without_branch
from assay.proposers.mutate.scale import constants_at, data_scale
from assay.proposers.tune import TuneProposer
from assay.proposers.tune.evidence import Evidence, Structure

FAMILIES = ("mutate", "tune")
TURN_NOTE = ", as the edit changed nothing"
FLIP_NOTE = ", as the edit made things worse"
POPULATION_NOTE = " a structure scoring "  # in the description of an edit made from the population
MAX_PRUNES = 8  # removals tried after one keep
PAIRING_NOTE = " (pairing inputs)"
MAX_PAIRINGS = 3 * len(FORMS)  # pairings tried after one keep (or from the start): up to 3 partners
# Edits that follow up an earlier one or start from elsewhere than the incumbent alone.
FOLLOW_UPS = (TURN_NOTE, FLIP_NOTE, POPULATION_NOTE, PAIRING_NOTE, PRUNE_NOTE)
STALLED_AFTER = 10  # decisions without a keep before structural edits draw on the population
RECENT = 20  # the decisions the offline proposer's own rules read (keep rates, follow-ups, pairings, prunes)
# Of structural edits, once stalled and while another structure made a measured difference: a graft between two
# programs, and an operator's edit of that other structure.
CROSSOVER_SHARE = 0.2
ELSEWHERE_SHARE = 0.2
# The moves of the default's own schedule, by the operator names their proposals carry (``evolve.proposer.without``
# may name them, as it may name any operator, to leave them out: an ablation).
CROSSOVER, POPULATION = "py.crossover", "population"
SCHEDULE_MOVES = ("py.pair", "python.turn", "python.flip", "python.prune", CROSSOVER, POPULATION, "tune")


class MutateProposer(Proposer):
    """Built-in operators, no LLM. Deterministic per (seed, generation, draw), so a resumed generation proposes
    the same change again."""

    name = "mutate"
    redraws = 25

    def __init__(self, seed: int = 0, without: Collection[str] = ()) -> None:
        self.seed = seed
        self.without = frozenset(without)
        self._scale: tuple[tuple[str, ...], float | None] | None = None

    def scale(self, view: ProposerView) -> float | None:
        """The scale of the numbers the dev cases' vars carry, when far from the operators' own palettes
        (:func:`~assay.proposers.mutate.scale.data_scale`). A run's dev cases stay the same, so they are read once
        and again only when their ids change."""
        ids = tuple(case.id for case in view.dev_cases)
        if self._scale is None or self._scale[0] != ids:
            self._scale = ids, data_scale(case.vars for case in view.dev_cases)
        return self._scale[1]

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        key = f"{self.seed}:{view.generation}" + (f":{view.layer}:{view.attempt}" if view.attempt else "")
        # An operator every change of which failed to run on this artifact is not drawn again.
        failing = Credit.of(view.history).failing_operators() | self.without
        with constants_at(self.scale(view)):
            mutation = mutate(dict(view.artifact), layer=view.layer, rng=random.Random(key), skip=failing)
        if mutation is None:
            return Proposal(
                ok=False,
                description="no mutation",
                error=f"no operator applies at the {layer_name(view.layer)} layer",
                exhausted=True,
            )
        return written(worktree, mutation)


def _unless(failing: Collection[str], made: Mutation | None) -> Mutation | None:
    """``made``, unless its operator is one of ``failing``."""
    return None if made is None or made.operator in failing else made


def _recent(view: ProposerView) -> list[HistoryEntry]:
    return view.history[-RECENT:]


@PROPOSERS.register("mutate")
class OfflineProposer(Proposer):
    """The offline default (``proposer: {type: mutate}``): a structural edit (``mutate``) or numeric tuning
    (``tune``) per generation; with ``tuning: false``, the structural edits alone (:class:`MutateProposer`).

    Right after a keep, the kept program is first proposed without each branch it added over the baseline, one
    per generation (:mod:`~assay.proposers.mutate.python_prune`): the gate keeps a removal only when nothing
    measured changed, so a program a user adopts carries no branch that none of its dev instances needs; when a
    stop rule such as a target met ends the run right after a keep, these removals still run first
    (:meth:`tidies`).
    A structural edit is followed by tuning (of what it introduced, or of the best structures so far), except
    that an edit which changed nothing measured and added a comparison is first tried with the comparison turned
    the other way round, or a band it added mirrored to the other side of zero (:func:`turned_round`): one of the
    two sides of a new threshold is often inert; and an
    edit that made the dev score worse and added a shift to a returned value is first tried with the shift
    flipped (:func:`flipped`; tuning keeps a number's sign). After a
    tuning trial, a Thompson draw over the two families' keep rates in the recent history (a Beta(1 + keeps,
    1 + discards) per family) decides.
    At the core and architecture layers, a structural edit of the incumbent is a guard (:meth:`case_split`) when a
    Thompson draw between guards and the layer's own operators says so.
    Once the last ``STALLED_AFTER`` decisions kept nothing, two structural edits in five start from the
    population when it holds another live structure (one that made a measured difference): a crossover with the
    incumbent, or an edit of that structure (:meth:`from_population`).
    While the best is the baseline and has a function parameter it never reads, the next generations pair it, in
    every form, with each name a returned value reads, one per generation, before any other edit (a user's own
    file may hold a parameter that rightly goes unread: once something else is kept, pairing is left to
    ``py.combine``'s draws); once such a pairing is kept, the other forms of the pair it made come next
    (:mod:`~assay.proposers.mutate.python_pairing`; at most ``MAX_PAIRINGS`` after a keep). A drawn operator may
    keep the first form that helps a little and miss the one that helps most.
    When structural edits are chosen but no operator applies at the current layer while one applies at another
    of ``layers``, the proposal gives way so that the loop moves on to that layer: tuning, which always has a
    number to try once any structure has one, would otherwise take every generation of a layer with nothing to
    edit (``return value`` has no constant for a surface edit). When the chosen family has nothing to offer at
    any layer the other one is tried; when its draws all repeat earlier candidates, the loop moves on to the next
    layer. Deterministic per (seed, generation, draw).
    Where no annotation says that a function takes numpy arrays, its edits are written for plain numbers until
    the run's own evidence says otherwise: once structures written so in a file that imports numpy crashed on
    every case more often than ones written elementwise did (:func:`array_evidence`; ``if bins > c:`` asks an
    array for one truth value), the operators write the elementwise forms
    (:func:`~assay.proposers.mutate.python_arrays.arrays_assumed`). The evidence is every crashed structure of
    the history, each compared with the program it was made from.

    Everything it learns from earlier generations it derives from the view's history (the trials and
    structures of :mod:`~assay.proposers.tune.evidence` included), so a resumed run proposes as the
    uninterrupted run did."""

    name = "mutate"
    redraws = 25

    def __init__(
        self,
        seed: int = 0,
        parameters: dict[str, ParameterSpec] | None = None,
        layers: Sequence[int] = LAYERS,
        without: Collection[str] = (),
    ) -> None:
        self.seed = seed
        self.layers = tuple(layers)
        self.without = frozenset(without)
        self.operators = MutateProposer(seed, without)
        self.tuner = TuneProposer(seed, parameters)
        self._files: dict[str, dict[str, str]] = {}  # a commit's files never change

    @classmethod
    def from_config(cls, config: AssayConfig | None = None, *, use_cache: bool = True) -> Proposer:
        """The proposer ``proposer: {type: mutate}`` names: this one, or the structural edits alone with
        ``tuning: false`` (None: the defaults)."""
        if config is None:
            return cls()
        evolve = config.evolve
        without = evolve.proposer.without
        known = {*OPERATORS.names(), *SCHEDULE_MOVES}
        unknown = [name for name in without if name not in known]
        if unknown:
            raise ConfigError(
                f"evolve.proposer.without: unknown move {unknown[0]!r}; known: {', '.join(sorted(known))}"
            )
        if not evolve.proposer.tuning:
            return MutateProposer(seed=evolve.seed, without=without)
        return cls(seed=evolve.seed, parameters=evolve.parameters, layers=evolve.layers, without=without)

    def choose(self, view: ProposerView) -> str:
        """The family to draw from first, from the history of decisions."""
        history = [h for h in _recent(view) if h.proposer in FAMILIES]
        if history and history[-1].proposer == "mutate":
            return "tune"
        rng = random.Random(f"{self.seed}:family:{view.generation}")
        draws = {}
        for family in FAMILIES:
            tried = [h for h in history if h.proposer == family]
            keeps = sum(1 for h in tried if h.decision == "keep")
            draws[family] = rng.betavariate(1 + keeps, 1 + len(tried) - keeps)
        return max(FAMILIES, key=lambda f: draws[f])

    def turn(self, view: ProposerView, evidence: Evidence) -> Mutation | None:
        """The last structural edit with its new comparisons turned round when its measured dev score was exactly
        the incumbent's, or with its new shifts flipped when the score was lower (the description ends in
        ``TURN_NOTE`` or ``FLIP_NOTE``); only when it was the last candidate, measured once (for a turn, or of a
        structure none of whose trials ever measured a difference: a guard written the wrong way round changes
        nothing at any numbers, so a second such guard is turned as the first was), and not such a turn or flip
        itself (first draw only: a repeat is redrawn as usual)."""
        last = view.history[-1] if view.history else None
        latest = next((s for s in evidence.structures if s.latest), None)
        if (
            view.attempt
            or last is None
            or last.proposer != "mutate"
            # Not after a turn or a flip (it would give back the edit), an edit from the population, a pairing
            # (which tries its own forms) or a removal.
            or any(note in last.description for note in FOLLOW_UPS)
            or latest is None
            # Once tuned, a structure's numbers may be why it changed nothing, unless it never measured anything.
            or (latest.trials != 1 and not latest.inert)
            or latest.crashed
        ):
            return None
        best = evidence.parent_score
        if latest.inert:
            made_by, note = turned_round, TURN_NOTE
        elif best is not None and latest.score < best:
            made_by, note = flipped, FLIP_NOTE
        else:
            return None
        for path, text in latest.files.items():
            parent = view.artifact.get(path)
            if parent is not None and text != parent and path.endswith(".py"):
                made = made_by(parent, path, text)
                return None if made is None else replace(made, description=made.description + note)
        return None

    def prune(self, view: ProposerView) -> Mutation | None:
        """The parent without the next branch it added over the baseline, while every decision since the last
        keep was such a removal; a redraw (a removal that repeated an earlier candidate: an outer branch whose
        removal gives back the baseline) offers the branch after it."""
        if not view.best_diff or "python.prune" in self.without:
            return None
        since = 0
        for entry in reversed(_recent(view)):
            if entry.decision == "keep":
                break
            if PRUNE_NOTE not in entry.description:
                return None
            since += 1
        else:
            return None  # no keep in the recent history
        branches = [
            (path, line)
            for path in sorted(view.artifact)
            if path.endswith(".py")
            for line in added_branches(view.artifact[path], view.best_diff)
        ]
        offered = since + view.attempt
        if offered >= min(len(branches), MAX_PRUNES):
            return None
        path, line = branches[offered]
        return without_branch(path, view.artifact[path], line)

    def pair(self, view: ProposerView) -> Mutation | None:
        """The next pairing of the parent's inputs: of a parameter it never reads while the best is still the
        baseline, or, right after a pairing was kept, another form of the pair it made. None when there is none
        left to try."""
        tried = 0
        reform = False
        for entry in reversed(_recent(view)):
            if entry.decision == "keep":
                reform = PAIRING_NOTE in entry.description
                break
            tried += PAIRING_NOTE in entry.description
        if tried >= MAX_PAIRINGS or (view.best_diff and not reform):
            return None  # unread inputs are paired from the start only: later keeps were the search's own
        for path in sorted(view.artifact):
            if path.endswith(".py"):
                order = f"{self.seed}:pairing:{path}"
                made, count = pairing(path, view.artifact[path], tried + view.attempt, order, reform=reform)
                if count:
                    return made
        return None

    def tidies(self, view: ProposerView) -> bool:
        """Whether a branch the best added is still to be offered for removal (:meth:`prune`)."""
        return self.prune(view) is not None

    async def tidy(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        pruned = self.prune(view)
        if pruned is None:
            return await super().tidy(view, worktree, editable=editable)
        return written(worktree, pruned)

    def files_at(self, view: ProposerView, commit: str) -> dict[str, str]:
        known = self._files.get(commit)
        if known is None:
            known = self._files[commit] = view.artifact_at(commit)
        return known

    def arrays(self, view: ProposerView, evidence: Evidence) -> bool:
        """Whether the run's crashes say that the parent's functions take numpy arrays (:func:`array_evidence`
        over every structure of the history other than the parent's, with a number to tune, all of whose trials
        crashed, each against the program it was made from)."""
        own = evidence.trials[0].point.study if evidence.trials else None
        crashed = {t.point.study for t in evidence.trials if t.crashed and t.point.values and t.commit}
        crashed -= {t.point.study for t in evidence.trials if not t.crashed} | {own}
        if not crashed:
            return False
        studies = {t.commit: t.point.study for t in evidence.trials if t.commit}
        seen: dict[str, int] = {}
        for entry in view.history:
            study = studies.get(entry.commit)
            if study in crashed and study not in seen and entry.parent:
                made = Structure(study, self.files_at(view, entry.commit), 0.0, 1, crashed=True)
                seen[study] = array_evidence(made, self.files_at(view, entry.parent))
        return sum(seen.values()) > 0

    def evidence(self, view: ProposerView) -> Evidence:
        """The trials and structures of the run, derived from the view (:mod:`~assay.proposers.tune.evidence`)."""
        return self.tuner.evidence.of(replace(view, artifact_at=lambda commit: self.files_at(view, commit)))

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        return await self.propose_with(view, self.evidence(view), worktree, editable=editable)

    async def propose_with(
        self, view: ProposerView, evidence: Evidence, worktree: Path, *, editable: list[str]
    ) -> Proposal:
        """A proposal for ``view`` from ``evidence`` (:meth:`propose` derives it from the view itself)."""
        with constants_at(self.operators.scale(view)), arrays_assumed(self.arrays(view, evidence)):
            return await self._propose(view, evidence, worktree, editable=editable)

    async def _propose(
        self, view: ProposerView, evidence: Evidence, worktree: Path, *, editable: list[str]
    ) -> Proposal:
        pruned = self.prune(view)
        if pruned is not None:
            return written(worktree, pruned)
        turned = _unless(self.without, self.turn(view, evidence))
        if turned is not None:
            return written(worktree, turned)
        # The schedule's own edits go the way of any operator's: one every change of which failed to run on
        # this artifact (3 or more) is not made again, nor one the configuration leaves out.
        failing = Credit.of(view.history).failing_operators() | self.without
        paired = _unless(failing, self.pair(view))
        if paired is not None:
            return written(worktree, paired, PAIRING_NOTE)
        first = self.choose(view)
        order = [f for f in dict.fromkeys((first, *FAMILIES)) if f not in self.without]
        made = Proposal(ok=False, description="no change", error="nothing to propose", exhausted=True)
        for family in order:
            if family == "mutate":
                elsewhere = self.from_population(view, evidence, worktree)
                if elsewhere is not None:
                    return elsewhere
                split = _unless(failing, self.case_split(view))
                if split is not None:
                    return written(worktree, split)
                made = await self.operators.propose(view, worktree, editable=editable)
            else:
                made = await self.tuner.propose_with(view, evidence, worktree)
            if made.ok or not made.exhausted:
                return made
            if family == "mutate" and self.edits_elsewhere(view):
                return made  # the loop moves on to a layer with an operator that applies
        return made

    def from_population(self, view: ProposerView, evidence: Evidence, worktree: Path) -> Proposal | None:
        """A structural edit that starts from the population rather than the incumbent alone, when the draw
        says so and it applies: a crossover of the incumbent with another live structure (either way round),
        or an operator's edit of another live structure. None: the incumbent's own edit is drawn as usual."""
        live = [s for s in evidence.structures if not s.inert and not s.crashed]
        recent = view.history[-STALLED_AFTER:]
        if not live or len(recent) < STALLED_AFTER or any(h.decision == "keep" for h in recent):
            return None  # the incumbent's lineage still moves: build on it
        rng = random.Random(f"{self.seed}:population:{view.generation}:{view.attempt}")
        draw = rng.random()
        crossing = draw < CROSSOVER_SHARE
        if (
            draw >= CROSSOVER_SHARE + ELSEWHERE_SHARE
            or (CROSSOVER if crossing else POPULATION) in self.without
        ):
            return None
        other = _by_rank(live, rng)
        if crossing:
            pair = (view.artifact, other.files)
            recipient, donor = pair if rng.random() < 0.5 else pair[::-1]
            paths = [p for p in sorted(recipient) if p.endswith(".py") and recipient[p] != donor.get(p)]
            made = next(
                (m for p in paths if (m := crossover(p, recipient[p], donor.get(p, ""), rng)) is not None),
                None,
            )
            how = "crossed with" if recipient is view.artifact else "crossed into"
        else:
            recipient = other.files
            made = mutate(dict(recipient), layer=view.layer, rng=rng, skip=self.without)
            how = "on"
        if made is None:
            return None
        for path, text in {**recipient, made.path: made.new_text}.items():
            if text != view.artifact.get(path):
                (worktree / path).write_text(text, encoding="utf-8")
        description = f"{made.description} ({how}{POPULATION_NOTE}{other.score:.4f})"
        operator = CROSSOVER if crossing else f"{made.operator} ({POPULATION})"
        return Proposal(ok=True, description=description, via="mutate", operator=operator)

    def case_split(self, view: ProposerView) -> Mutation | None:
        """A guarded return (``py.guard``) added to one of the incumbent's Python files at the core or the
        architecture layer (when the run's layers include the core one), when a Thompson draw favours guards over
        the other structural edits; None: the layer's operators draw. The surface layer's edits (a constant, an
        operator) are left whole: on a fitted curve they are fine steps that tuning misses.

        Each side is a Beta(1 + opened, 1 + not) over the incumbent's own structural edits so far (no follow-up
        or edit from the population): an edit opened something when its dev score differed from its parent's
        by an amount no earlier such edit had produced. A guard that never fires, or one that repeats what an
        earlier edit found, teaches nothing new."""
        guard = OPERATORS.get("py.guard")
        if guard.layer not in self.layers or view.layer < guard.layer:
            return None  # the run leaves guards out, or the surface layer's fine steps are due
        tally = {True: [0, 0], False: [0, 0]}
        seen: set[float] = set()
        for entry in _recent(view):
            if entry.proposer != "mutate" or entry.delta is None:
                continue
            if any(note in entry.description for note in FOLLOW_UPS):
                continue
            delta = round(entry.delta, 9)
            tally[GUARD_HEAD in entry.description][0 if delta and delta not in seen else 1] += 1
            seen.add(delta)
        rng = random.Random(f"{self.seed}:split:{view.generation}:{view.attempt}")
        guards = rng.betavariate(1 + tally[True][0], 1 + tally[True][1])
        others = rng.betavariate(1 + tally[False][0], 1 + tally[False][1])
        if guards <= others:
            return None
        paths = [p for p in sorted(view.artifact) if file_kind(p, view.artifact[p]) == "python"]
        rng.shuffle(paths)
        return next((m for p in paths if (m := guard.apply(p, view.artifact[p], rng)) is not None), None)

    def edits_elsewhere(self, view: ProposerView) -> bool:
        """Whether an operator applies to the parent's files at another of the run's layers."""
        files = dict(view.artifact)
        rng = random.Random(f"{self.seed}:{view.generation}:elsewhere")
        return any(
            mutate(files, layer=layer, rng=rng) is not None for layer in self.layers if layer != view.layer
        )


def array_evidence(structure: Structure, artifact: dict[str, str]) -> int:
    """What a structure that crashed on every case says of whether the parent's functions take numpy arrays where
    no annotation says so: 1 when it is an edit written for plain numbers in a Python file that imports numpy
    (``if 0 < bins - c < w:`` asks an array for one truth value and raises), -1 when it was written elementwise
    there (``np.where``: its crash had another cause), 0 otherwise."""
    if not structure.crashed:
        return 0
    for path, text in structure.files.items():
        parent = artifact.get(path)
        if parent is None or text == parent or not path.endswith(".py"):
            continue
        numpy = _numpy_of(parent)
        if numpy is not None:
            return -1 if _elementwise_calls(text, numpy) > _elementwise_calls(parent, numpy) else 1
    return 0


def _numpy_of(text: str) -> str | None:
    try:
        return numpy_name(ast.parse(text))
    except (SyntaxError, ValueError):
        return None


def _elementwise_calls(text: str, numpy: str) -> int:
    return sum(text.count(f"{numpy}.{name}(") for name in ("where", "minimum", "maximum"))


def written(worktree: Path, made: Mutation, note: str = "") -> Proposal:
    """``made`` written into ``worktree``, as a structural edit's proposal whose description ends in ``note``."""
    (worktree / made.path).write_text(made.new_text, encoding="utf-8")
    return Proposal(ok=True, description=made.description + note, via="mutate", operator=made.operator)


def _by_rank(structures: list[Structure], rng: random.Random) -> Structure:
    """A structure drawn with weight 1 / rank by score (FunSearch samples an island's programs by score)."""
    ranked = sorted(structures, key=lambda s: -s.score)
    return rng.choices(ranked, weights=[1 / (rank + 1) for rank in range(len(ranked))])[0]
