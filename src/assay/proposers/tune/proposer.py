"""The ``tune`` proposer: new values for the artifact's tunable numbers, proposed by an Optuna sampler.

Each call picks a program structure to tune (the parent's, or another one evaluated earlier: a structural edit
discarded at its first values may win at others), builds an in-memory study from the trials it derives from the
view's history (:mod:`~assay.proposers.tune.evidence`: every evaluated candidate of the same program structure,
the parent first, with its mean dev score), asks the sampler for one point and writes it into the files. The
run's events are the only record of the trials, so a resumed run rebuilds the same study and asks the same
question; Optuna's own storage is never read back. Once the parent's structure
has :data:`REFINE_AFTER` trials, most of its draws search near its values (:meth:`SearchSpace.around`).
Half the draws on a structure with a trial are a compass step instead (:meth:`TuneProposer.step`): one number
halved or doubled, then finer; a sampler moves every number a little where one number often has to move a lot.

Samplers: TPE (multivariate) by default; CMA-ES once a study has several continuous parameters and enough
trials to start from (``sampler: auto``). The sampler is seeded by (seed, generation, draw).
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal

import optuna
from optuna.samplers import BaseSampler, CmaEsSampler, TPESampler
from optuna.trial import create_trial

from assay.config import AssayConfig, ParameterSpec
from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.credit import Credit
from assay.proposers.tune.evidence import Evidence, EvidenceReader, Trial
from assay.proposers.tune.sites import write_values
from assay.proposers.tune.space import Parameter, SearchSpace, search_space

STARTUP_TRIALS = 4  # random points before TPE models the scores
CMA_AFTER = 8  # trials in a study before CMA-ES takes over (auto), with 2+ continuous parameters
NEAR_BEST = 0.02  # a structure this close to the parent's score is as worth tuning as the parent's
FAR_WEIGHT = 0.2
FLAT_AFTER = 3  # trials of a structure, all with the same score: its numbers do not matter, tune another
FLAT_WEIGHT = 0.05
INERT_WEIGHT = 0.1  # another structure whose every trial measured exactly what the incumbent measured
CRASHED_WEIGHT = 0.05  # another structure none of whose trials ran: new numbers seldom cure a crash
REFINE_AFTER = 2  # trials of the parent's structure before some draws search near its values
REFINE_SHARE = 0.75  # of the draws on the parent's structure, once it has REFINE_AFTER trials
MOVES_SHOWN = 2
STEP_SHARE = 0.5  # of the draws on a structure with a trial: a compass step (see TuneProposer.step) ...
STEP_FACTORS = (2.0, math.sqrt(2.0), 2.0**0.25)  # ... halving or doubling one number, then finer steps

Sampler = Literal["auto", "tpe", "cmaes", "random"]


@PROPOSERS.register("tune")
class TuneProposer(Proposer):
    """Numeric tuning with Optuna (see the module docstring). Deterministic per (seed, generation, draw)."""

    name = "tune"
    redraws = 8

    def __init__(
        self, seed: int = 0, parameters: dict[str, ParameterSpec] | None = None, sampler: Sampler = "auto"
    ) -> None:
        self.seed = seed
        self.parameters = dict(parameters or {})
        self.sampler = sampler
        self.evidence = EvidenceReader(self.parameters)

    @classmethod
    def from_config(cls, config: AssayConfig | None = None, *, use_cache: bool = True) -> TuneProposer:
        """The proposer ``proposer: {type: tune}`` names (None: the defaults)."""
        if config is None:
            return cls()
        return cls(seed=config.evolve.seed, parameters=config.evolve.parameters)

    def space(self, files: dict[str, str]) -> SearchSpace:
        return search_space(files, self.parameters)

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        return await self.propose_with(view, self.evidence.of(view), worktree)

    async def propose_with(self, view: ProposerView, evidence: Evidence, worktree: Path) -> Proposal:
        """A proposal for ``view`` from ``evidence`` (:meth:`propose` derives it from the view itself)."""
        # A number every change of which so far failed to run (an array's size, a date's year) stays as it is.
        avoid = Credit.of(view.history).failing_sites()
        chosen = self.choose(view, evidence, avoid)
        if chosen is None:
            return Proposal(
                ok=False,
                description="no tuning",
                error="no tunable number (but in structures that changed nothing measured or never ran)",
                exhausted=True,
            )
        files, space, label = chosen
        trials = [t for t in evidence.trials if t.point.study == space.study]
        values, how = self.draw(space, trials, view.generation, view.attempt, parent=not label, avoid=avoid)
        values.update({p.name: p.site.value for p in space.parameters if p.name in avoid})
        if how == "stepped":
            label = f"{label}, one number stepped" if label else "one number stepped"
        elif how == "near":
            label = "near the best values"
        values.update({site.name: value for site, value in space.pinned})
        sites = [p.site for p in space.parameters] + [site for site, _ in space.pinned]
        try:
            written = {**files, **write_values(files, sites, values)}
        except ValueError as exc:
            return Proposal(ok=False, description="no tuning", error=str(exc))
        for path, text in written.items():
            if text != view.artifact.get(path):
                (worktree / path).write_text(text, encoding="utf-8")
        moved = [p.name for p in space.parameters if values[p.name] != p.site.value]
        return Proposal(
            ok=True,
            description=describe(space.parameters, values, label),
            via="tune",
            operator="tune",
            sites=moved,
        )

    def choose(
        self, view: ProposerView, evidence: Evidence, avoid: Collection[str] = ()
    ) -> tuple[dict[str, str], SearchSpace, str] | None:
        """The structure to tune: the parent's, or one of the other structures in the view (a structural edit
        that was discarded at its first values), drawn with weights that favour good scores and few trials, and
        shun a structure whose trials all scored the same. Another structure whose trials all measured exactly
        what the incumbent of their time measured is inert so far (a guard that never fires, a term too small to
        reorder anything) and gets a tenth of the usual weight: on a deterministic task such structures would
        otherwise take most draws from the few whose numbers measurably matter; one none of whose trials ran gets
        a twentieth. A structure the last structural edit introduced gets half the draws unless it is inert or
        crashed: its first values are arbitrary, so its first score says little. The parent's own structure, unless
        flat, is at least as likely as all the others together: it is the best kept so far, and a run tends to
        end with its numbers short of their best. None when nothing is live: the parent's files have no tunable
        number and every other structure is inert or crashed (a structural edit is worth more than a draw). A
        number named in ``avoid`` is not tuned: a structure with no other number is left out."""
        parent_score = evidence.parent_score
        options: list[tuple[dict[str, str], SearchSpace, str]] = []
        weights: list[float] = []
        damps: list[float] = []
        fresh: int | None = None  # the option a structural edit just introduced, never tuned yet
        steady = False  # the parent's structure is an option and not flat
        for files, score, label, new, damp in [
            (view.artifact, parent_score, "", False, 1.0),
            *(
                (
                    s.files,
                    s.score,
                    f"on a structure scoring {s.score:.4f}",
                    s.latest and s.trials == 1,
                    CRASHED_WEIGHT if s.crashed else INERT_WEIGHT if s.inert else 1.0,
                )
                for s in evidence.structures
            ),
        ]:
            space = self.space(files)
            if all(p.name in avoid for p in space.parameters):
                continue
            scores = {t.score for t in evidence.trials if t.point.study == space.study}
            known = sum(1 for t in evidence.trials if t.point.study == space.study)
            near = parent_score is None or score is None or score >= parent_score - NEAR_BEST
            flat = known >= FLAT_AFTER and len(scores) == 1  # its numbers change nothing measured
            if new and damp == 1.0:
                fresh = len(options)
            if files is view.artifact:
                steady = not flat
            options.append((files, space, label))
            damps.append(damp)
            weights.append(
                (FLAT_WEIGHT if flat else damp) * (1.0 if near else FAR_WEIGHT) / math.sqrt(1 + known)
            )
        if not any(w == 1.0 for w in damps):
            return None  # nothing live: only structures that changed nothing measured or never ran
        if steady:  # the incumbent's own numbers: at least as likely as all other structures together
            weights[0] = max(weights[0], sum(weights[1:]))
        if fresh is not None:  # as likely as all the others together, whatever its first values scored
            weights[fresh] = sum(w for i, w in enumerate(weights) if i != fresh) or 1.0
        rng = random.Random(f"{self.seed}:structure:{view.generation}:{view.attempt}")
        return rng.choices(options, weights=weights)[0]

    def draw(
        self,
        space: SearchSpace,
        trials: list[Trial],
        generation: int,
        attempt: int,
        *,
        parent: bool = True,
        avoid: Collection[str] = (),
    ) -> tuple[dict[str, int | float], str]:
        """The next point to try on a structure whose trials are ``trials``, and how it was drawn: ``stepped``
        (:meth:`step`), ``near`` the files' values (only for the ``parent``'s structure once it has
        :data:`REFINE_AFTER` trials, ``REFINE_SHARE`` of the time) or ``sampled`` over the whole ranges."""
        values = self.step(space, trials, generation, attempt, avoid)
        if values is not None:
            return values, "stepped"
        if parent and len(trials) >= REFINE_AFTER:
            rng = random.Random(f"{self.seed}:refine:{generation}:{attempt}")
            if rng.random() < REFINE_SHARE:
                return self.ask(space.around(), trials, generation, attempt), "near"
        return self.ask(space, trials, generation, attempt), "sampled"

    def step(
        self,
        space: SearchSpace,
        trials: list[Trial],
        generation: int,
        attempt: int,
        avoid: Collection[str] = (),
    ) -> dict[str, int | float] | None:
        """A compass step, ``STEP_SHARE`` of the time once the structure has a trial (never for the random
        sampler): the files' own values with one number multiplied by the first factor of ``STEP_FACTORS`` that
        gives a point no trial of this structure has tried, the number and the direction drawn. None for a
        draw of the sampler instead, or when every step has been tried."""
        rng = random.Random(f"{self.seed}:step:{generation}:{attempt}")
        if self.sampler == "random" or not trials or rng.random() >= STEP_SHARE:
            return None
        here = {p.name: p.site.value for p in space.parameters}
        tried = {_key(t.point.values) for t in trials}
        for factor in STEP_FACTORS:
            steps = []
            for parameter in space.parameters:
                if parameter.name in avoid:
                    continue
                value = here[parameter.name]
                for scale in (factor, 1 / factor):
                    moved = parameter.cast(
                        min(parameter.high, max(parameter.low, value * scale if value else scale - 1))
                    )
                    point = {**here, parameter.name: moved}
                    if moved != value and _key(point) not in tried:
                        steps.append(point)
            if steps:
                return rng.choice(steps)
        return None

    def ask(
        self, space: SearchSpace, trials: list[Trial], generation: int, attempt: int
    ) -> dict[str, int | float]:
        """The next point of the study that ``trials`` (of this structure) make up."""
        distributions = space.distributions()
        seed = random.Random(f"{self.seed}:tune:{generation}:{attempt}").randrange(2**31)
        study = optuna.create_study(direction="maximize", sampler=self._sampler(space, len(trials), seed))
        for trial in trials:
            params = trial.point.values
            if set(params) == set(distributions) and all(
                p.contains(params[p.name]) for p in space.parameters
            ):
                study.add_trial(
                    create_trial(
                        params={p.name: _typed(p, params[p.name]) for p in space.parameters},
                        distributions=distributions,
                        value=trial.score,
                    )
                )
        asked = study.ask(distributions)
        return {p.name: p.cast(asked.params[p.name]) for p in space.parameters}

    def _sampler(self, space: SearchSpace, known: int, seed: int) -> BaseSampler:
        continuous = sum(1 for p in space.parameters if not p.integer)
        kind = self.sampler
        if kind == "auto":
            kind = "cmaes" if continuous >= 2 and known >= CMA_AFTER else "tpe"
        if kind == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        if kind == "cmaes":
            return CmaEsSampler(seed=seed, n_startup_trials=0, warn_independent_sampling=False)
        return TPESampler(seed=seed, n_startup_trials=STARTUP_TRIALS, multivariate=True)


def _key(values: Mapping[str, float]) -> frozenset[tuple[str, float]]:
    """A point as a set member: its values as floats, as trials record them."""
    return frozenset((name, float(value)) for name, value in values.items())


def _typed(parameter: Parameter, value: float) -> int | float:
    return int(value) if parameter.integer else float(value)


def describe(parameters: list[Parameter], values: dict[str, int | float], label: str = "") -> str:
    """``tune: a.json:threshold 5 -> 13, f.py:priority#1 0.5 -> 0.31`` (changed values only; the first
    :data:`MOVES_SHOWN`, then how many more, so the line stays short in logs and commit messages)."""
    moves = [
        f"{p.name} {p.site.value!r} -> {values[p.name]!r}"
        for p in parameters
        if values[p.name] != p.site.value
    ]
    shown = ", ".join(moves[:MOVES_SHOWN]) + (
        f" and {len(moves) - MOVES_SHOWN} more" if len(moves) > MOVES_SHOWN else ""
    )
    head = f"tune {label}: " if label else "tune: "
    return head + (shown or "same values")


optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
