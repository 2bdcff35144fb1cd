"""The spend part of loop state: what the run spent and for how long it has been running, its sessions, and the
noise runs (the baseline's repeated dev runs, the paired gate's fresh runs) with the noise estimate."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.loop.events import Decided, Event, NoiseMeasured, Runs, Spend, Started
from assay.loop.measure import verdicts
from assay.loop.state.lineage import Outcome
from assay.stats import NoiseEstimate, estimate_noise


@dataclass
class Spending:
    """What the run spent (every event's ``spent`` summed) and its running time, sessions and noise runs."""

    spent: Spend = field(default_factory=Spend)
    elapsed: float = 0.0
    sessions: int = 0
    noise: NoiseEstimate | None = None
    noise_spent: Spend = field(default_factory=Spend)
    runs: dict[str, Runs] = field(default_factory=dict)  # per commit, per dev case: 1.0 a pass, 0.0 a failure

    def apply(self, event: Event, outcome: Outcome | None) -> None:
        """Fold every event's spend and time; ``started``, ``noise``, and a decision's paired-gate runs."""
        self.spent = self.spent + event.spent
        self.elapsed = max(self.elapsed, event.elapsed)
        match event:
            case Started():
                self.sessions += 1
            case NoiseMeasured():
                self.runs[event.commit] = {k: list(v) for k, v in event.runs.items()}
                self.noise = estimate_noise(self.runs[event.commit])
                self.noise_spent = event.spent
            case Decided() if outcome is not None:
                self._settle_runs(event, outcome)

    def _settle_runs(self, event: Decided, outcome: Outcome) -> None:
        """The paired gate's runs: the parent keeps its new runs; a kept candidate keeps all of its own."""
        extra = event.extra_runs
        if not extra.parent:
            return
        parent = outcome.rerun_parent
        known = self.runs.setdefault(extra.parent, verdicts(parent.dev if parent and parent.dev else None))
        for cid, runs in extra.on_parent.items():
            known.setdefault(cid, []).extend(runs)
        dev = outcome.measurement.dev
        if outcome.kept and outcome.commit is not None and dev is not None:
            mine = verdicts(dev)
            for cid, runs in extra.on_candidate.items():
                mine.setdefault(cid, []).extend(runs)
            self.runs[outcome.commit] = mine
