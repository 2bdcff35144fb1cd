"""Stop rules: small objects that look at the run before each generation and may end it.

Rules about the run's own history read a :class:`~assay.loop.state.view.RunView`, a frozen view of the folded
state (a rule cannot change the run); the few that watch something live (the clock, a STOP file, Ctrl-C) hold
it themselves. Each built-in rule also says what it watches (``describe``), for plan.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.stopping import STOP_RULE, STOP_RULES, StopRule
from assay.words import plural

if TYPE_CHECKING:
    from assay.config import EvolveConfig
    from assay.loop.state.view import RunView
    from assay.presets import EvolveSettings

__all__ = ["STOP_RULE", "STOP_RULES", "StopRule", "firing", "standard_rules"]


@STOP_RULES.register("generations")
@dataclass
class MaxGenerations(StopRule):
    tidy_first = True
    limit: int

    def check(self, run: RunView) -> str | None:
        return f"reached {plural(self.limit, 'generation')}" if run.generation >= self.limit else None

    def describe(self) -> str:
        return plural(self.limit, "generation")


@STOP_RULES.register("wall_clock")
@dataclass
class WallClock(StopRule):
    """The run's running time (``now``: seconds, sessions before a resume included) reached ``seconds``."""

    seconds: float
    now: Callable[[], float]

    def check(self, run: RunView) -> str | None:
        return f"wall clock of {self.seconds:g}s used" if self.now() >= self.seconds else None

    def describe(self) -> str:
        return f"{self.seconds:g}s wall clock"


@STOP_RULES.register("budget")
@dataclass
class Budget(StopRule):
    tokens: int | None = None
    cost_usd: float | None = None
    evaluations: int | None = None
    judge_calls: int | None = None

    def check(self, run: RunView) -> str | None:
        spent = run.spent
        if self.tokens is not None and spent.tokens >= self.tokens:
            return f"token budget of {self.tokens} used"
        if self.cost_usd is not None and spent.cost_usd >= self.cost_usd:
            return f"cost budget of ${self.cost_usd:g} used"
        if self.evaluations is not None and spent.case_runs >= self.evaluations:
            return f"evaluation budget of {self.evaluations} case runs used"
        if self.judge_calls is not None and spent.judge_calls >= self.judge_calls:
            return f"judge budget of {self.judge_calls} model calls used"
        return None

    def describe(self) -> str:
        limits = [
            f"{self.tokens} tokens" if self.tokens is not None else "",
            f"${self.cost_usd:g}" if self.cost_usd is not None else "",
            f"{self.evaluations} case runs" if self.evaluations is not None else "",
            f"{self.judge_calls} judge calls" if self.judge_calls is not None else "",
        ]
        return "budget of " + ", ".join(limit for limit in limits if limit)

    @property
    def limited(self) -> bool:
        """Whether any budget is set (a rule without one never stops a run)."""
        return any(v is not None for v in (self.tokens, self.cost_usd, self.evaluations, self.judge_calls))


@STOP_RULES.register("target")
@dataclass
class TargetReached(StopRule):
    tidy_first = True
    pass_rate: float

    def check(self, run: RunView) -> str | None:
        return (
            f"target dev pass rate {self.pass_rate:g} reached"
            if run.best_pass_rate >= self.pass_rate
            else None
        )

    def describe(self) -> str:
        return f"target dev pass rate {self.pass_rate:g}"


@STOP_RULES.register("plateau")
@dataclass
class Plateau(StopRule):
    tidy_first = True
    generations: int

    def check(self, run: RunView) -> str | None:
        if run.since_keep >= self.generations:
            return f"plateau: no candidate kept in {plural(self.generations, 'generation')}"
        return None

    def describe(self) -> str:
        return f"plateau after {plural(self.generations, 'generation')} without a keep"


def alternates(seq: Sequence[Hashable], period: int = 2, cycles: int = 2) -> bool:
    """Whether ``seq`` ends in ``cycles`` full repeats of a pattern of ``period`` different values
    (A, B, A, B for the defaults)."""
    tail = list(seq[-period * cycles :])
    if len(tail) < period * cycles or len(set(tail[:period])) < period:
        return False
    return all(value == tail[index % period] for index, value in enumerate(tail))


@STOP_RULES.register("oscillation")
@dataclass
class Oscillation(StopRule):
    """Seed 003's oscillation: the candidates bounce A → B → A → B, in artifact content or in the set of failing
    cases (among candidates that ran and changed something; crashes and no-gain candidates do not count).

    Failing sets bounce only when they trade cases: when one of the two holds the other, the candidates went back
    and forth between worse and worse still (every case failing, and the best's failures and one more, in a
    search whose edits mostly do harm), which is the plateau rule's business, not a run going round in circles."""

    tidy_first = True

    def check(self, run: RunView) -> str | None:
        if alternates(run.content_hashes):
            return "oscillation: the content bounced A -> B -> A -> B"
        if alternates(run.failing_sets):
            one, other = run.failing_sets[-2:]
            if not (one <= other or other <= one):
                return "oscillation: the failing cases bounced A -> B -> A -> B"
        return None

    def describe(self) -> str:
        return "oscillation (content or traded failing cases A -> B -> A -> B)"


@STOP_RULES.register("regression")
@dataclass
class ScoreRegression(StopRule):
    """Seed 003's score regression, on what can fall under a ratchet: the best candidate's holdout score, as L3
    measured it after each change of the best, fell two times in a row (the run is fitting the dev cases).

    A fall counts when it is more than ``min_delta``, the least rise the gate counts as progress: a fall the gate
    would not count as a gain, one bin among a few hundred on one holdout case, says nothing of fitting."""

    min_delta: float = 0.0

    def check(self, run: RunView) -> str | None:
        s = run.best_holdouts[-3:]
        if len(s) == 3 and s[0] - s[1] > self.min_delta and s[1] - s[2] > self.min_delta:
            return "regression: the best's holdout score fell at two L3 checks in a row"
        return None

    def describe(self) -> str:
        by = f", by more than {self.min_delta:g} each time" if self.min_delta else ""
        return f"regression (the best's holdout score falling twice in a row{by})"


@STOP_RULES.register("layers_exhausted")
class LayersExhausted(StopRule):
    tidy_first = True

    def check(self, run: RunView) -> str | None:
        return "all layers exhausted" if run.layers_exhausted else None

    def describe(self) -> str:
        return "all layers exhausted"


@STOP_RULES.register("search_exhausted")
class SearchExhausted(StopRule):
    """The last proposal found nothing new at any layer: every draw repeated an earlier candidate."""

    tidy_first = True

    def check(self, run: RunView) -> str | None:
        return (
            "search exhausted: no layer gives a candidate not seen before" if run.search_exhausted else None
        )

    def describe(self) -> str:
        return "search exhausted (no layer gives a new candidate)"


DEAD_END = (
    "dead end"  # how a stop reason begins when the run could not go on: the runner or proposer is broken
)


@STOP_RULES.register("failed_in_a_row")
@dataclass
class FailedInARow(StopRule):
    """A dead end found during the run: the last ``limit`` candidates could not be proposed or evaluated (a
    proposer that answers with no edit, a runner that broke); the reason names their most common error."""

    limit: int

    def check(self, run: RunView) -> str | None:
        failures = run.failed_in_a_row
        if len(failures) < self.limit:
            return None
        error, count = Counter(failures[-self.limit :]).most_common(1)[0]
        last = "the last candidate" if self.limit == 1 else f"the last {self.limit} candidates"
        return f"{DEAD_END}: {last} could not be proposed or evaluated ({count} of {self.limit}: {error})"

    def describe(self) -> str:
        return f"dead end ({plural(self.limit, 'candidate')} in a row not proposed or not evaluated)"


@STOP_RULES.register("stop_file")
@dataclass
class StopFile(StopRule):
    """A file named STOP in the run directory ends the run after the current generation."""

    run_dir: Path

    def check(self, run: RunView) -> str | None:
        return "STOP file found" if (self.run_dir / "STOP").exists() else None

    def describe(self) -> str:
        return "a STOP file in this folder"


@STOP_RULES.register("interrupt")
@dataclass
class InterruptPressed(StopRule):
    """Ctrl-C once: ``pressed`` says so, and the run ends after the current generation."""

    pressed: Callable[[], bool]

    def check(self, run: RunView) -> str | None:
        return "interrupted (Ctrl-C)" if self.pressed() else None

    def describe(self) -> str:
        return "Ctrl-C"


def firing(rules: Sequence[StopRule], run: RunView) -> list[tuple[StopRule, str]]:
    """Every rule that says stop, in order, with its reason."""
    return [(rule, reason) for rule in rules if (reason := rule.check(run))]


def standard_rules(
    evolve: EvolveConfig,
    settings: EvolveSettings,
    max_generations: int,
    *,
    run_dir: Path,
    now: Callable[[], float],
    pressed: Callable[[], bool],
) -> list[StopRule]:
    """The rules every run checks before each generation, in the order their reasons are preferred; a rule that
    cannot fire under ``evolve`` is left out (no budget set; layers that cycle are never exhausted)."""
    budget = Budget(
        tokens=evolve.max_tokens,
        cost_usd=evolve.max_cost_usd,
        evaluations=evolve.max_evaluations,
        judge_calls=evolve.max_judge_calls,
    )
    rules: list[StopRule | None] = [
        InterruptPressed(pressed),
        StopFile(run_dir),
        TargetReached(evolve.target_pass_rate) if evolve.target_pass_rate is not None else None,
        MaxGenerations(max_generations),
        WallClock(settings.wall_clock_s, now),
        budget if budget.limited else None,
        Plateau(settings.plateau),
        FailedInARow(evolve.stop_after_failed),
        Oscillation() if evolve.stop_on_oscillation else None,
        ScoreRegression(float(settings.gate_options.get("min_delta", 0.0))),
        None if evolve.layers_cycle else LayersExhausted(),
        SearchExhausted(),
    ]
    return [rule for rule in rules if rule is not None]
