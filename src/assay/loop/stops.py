"""Stop rules: small objects that look at the run's state after each generation and may end the run."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.config import EvolveConfig
    from assay.presets import EvolveSettings


@dataclass
class RunState:
    """What stop rules look at. The engine updates it after every generation."""

    run_dir: Path
    generation: int = 0
    started: float = field(default_factory=time.monotonic)
    tokens: int = 0
    cost_usd: float = 0.0
    evaluations: int = 0
    judge_calls: int = 0
    best_pass_rate: float = 0.0
    since_keep: int = 0
    kept_scores: list[float] = field(default_factory=list)
    content_hashes: list[str] = field(default_factory=list)
    failing_sets: list[frozenset[str]] = field(default_factory=list)
    layers_exhausted: bool = False
    interrupted: bool = False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class StopRule(ABC):
    """Returns a one-line reason to stop, or None to go on."""

    @abstractmethod
    def check(self, state: RunState) -> str | None: ...


@dataclass
class MaxGenerations(StopRule):
    limit: int

    def check(self, state: RunState) -> str | None:
        return f"reached {self.limit} generations" if state.generation >= self.limit else None


@dataclass
class WallClock(StopRule):
    seconds: float

    def check(self, state: RunState) -> str | None:
        return f"wall clock of {self.seconds:g}s used" if state.elapsed >= self.seconds else None


@dataclass
class Budget(StopRule):
    tokens: int | None = None
    cost_usd: float | None = None
    evaluations: int | None = None
    judge_calls: int | None = None

    def check(self, state: RunState) -> str | None:
        if self.tokens is not None and state.tokens >= self.tokens:
            return f"token budget of {self.tokens} used"
        if self.cost_usd is not None and state.cost_usd >= self.cost_usd:
            return f"cost budget of ${self.cost_usd:g} used"
        if self.evaluations is not None and state.evaluations >= self.evaluations:
            return f"evaluation budget of {self.evaluations} case runs used"
        if self.judge_calls is not None and state.judge_calls >= self.judge_calls:
            return f"judge budget of {self.judge_calls} model calls used"
        return None


@dataclass
class TargetReached(StopRule):
    pass_rate: float

    def check(self, state: RunState) -> str | None:
        return (
            f"target dev pass rate {self.pass_rate:g} reached"
            if state.best_pass_rate >= self.pass_rate
            else None
        )


@dataclass
class Plateau(StopRule):
    generations: int

    def check(self, state: RunState) -> str | None:
        if state.since_keep >= self.generations:
            return f"plateau: no candidate kept in {self.generations} generations"
        return None


@dataclass
class Oscillation(StopRule):
    """The same artifact content, or the same set of failing cases, three times in a row."""

    repeats: int = 3

    def check(self, state: RunState) -> str | None:
        for label, seq in (("content", state.content_hashes), ("failing cases", state.failing_sets)):
            tail = seq[-self.repeats :]
            if len(tail) == self.repeats and len(set(tail)) == 1:
                return f"oscillation: the same {label} {self.repeats} times in a row"
        return None


@dataclass
class ScoreRegression(StopRule):
    """Kept candidates whose score fell strictly two generations in a row."""

    def check(self, state: RunState) -> str | None:
        s = state.kept_scores[-3:]
        if len(s) == 3 and s[0] > s[1] > s[2]:
            return "regression: the kept score fell two generations in a row"
        return None


class LayersExhausted(StopRule):
    def check(self, state: RunState) -> str | None:
        return "all layers exhausted" if state.layers_exhausted else None


class StopFile(StopRule):
    """A file named STOP in the run directory ends the run after the current generation."""

    def check(self, state: RunState) -> str | None:
        return "STOP file found" if (state.run_dir / "STOP").exists() else None


class Interrupted(StopRule):
    def check(self, state: RunState) -> str | None:
        return "interrupted (Ctrl-C)" if state.interrupted else None


def first_reason(rules: list[StopRule], state: RunState) -> str | None:
    """The first rule that says stop, in order."""
    for rule in rules:
        reason = rule.check(state)
        if reason:
            return reason
    return None


def standard_rules(evolve: EvolveConfig, settings: EvolveSettings, max_generations: int) -> list[StopRule]:
    """The rules every run checks after each generation, in the order their reasons are preferred."""
    rules: list[StopRule] = [
        Interrupted(),
        StopFile(),
        MaxGenerations(max_generations),
        WallClock(settings.wall_clock_s),
        Budget(
            tokens=evolve.max_tokens,
            cost_usd=evolve.max_cost_usd,
            evaluations=evolve.max_evaluations,
            judge_calls=evolve.max_judge_calls,
        ),
        Plateau(settings.plateau),
        ScoreRegression(),
        LayersExhausted(),
    ]
    if evolve.stop_on_oscillation:
        rules.insert(-2, Oscillation())
    if evolve.target_pass_rate is not None:
        rules.insert(2, TargetReached(evolve.target_pass_rate))
    return rules
