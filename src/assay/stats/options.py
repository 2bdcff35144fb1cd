"""Options of the sequential comparison: a plain dataclass the loop fills from its configuration."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from assay.errors import ConfigError
from assay.stats.boundaries import Spending


@dataclass(frozen=True)
class SequentialOptions:
    """How the noise-aware gate samples and decides (see docs/noise.md for the defaults' figures).

    - ``alpha``: one-sided error rate of "better" (false keeps) and of "worse" over all looks.
    - ``max_runs_per_case``: cap on the candidate's runs of one case; each later look gives the parent as
      many new runs as the candidate, so the parent ends with at most its known runs + cap - min_runs.
    - ``min_runs``: candidate runs every case gets at the first look (a deterministic case costs just these).
    - ``looks``: candidate runs per unsettled case at each look after the first; empty means
      about 3/8, 5/8 and all of the cap (``(3, 5, 7)`` for the default cap 7). Each later look adds as many new parent runs as candidate runs.
    - ``probe_runs``: a case whose runs all failed stays unsettled until the candidate has this many runs (a
      flaky gain on an always-failing case is invisible in one run); 1 settles it at the first look.
    - ``focus``: at later looks, add runs only to unsettled cases where the candidate is not behind the parent
      so far (and to unconfirmed regressions); runs go where a gain may be, and the test stays valid because
      each look's runs form new strata (docs/noise.md).
    - ``confirm_runs``: runs needed on each side before an all-pass -> all-fail case counts as a regression.
    - ``mid_p``: judge the exact test by its mid-p-value (less conservative with few runs; docs/noise.md).
    - ``spending``: alpha-spending design of the efficacy boundaries (``obrien_fleming`` or ``pocock``).
    - ``futility_z``: stop undecided at an interim look when z is below this (None: never).
    """

    alpha: float = 0.05
    max_runs_per_case: int = 7
    min_runs: int = 1
    looks: tuple[int, ...] = ()
    probe_runs: int = 3
    focus: bool = True
    confirm_runs: int = 5
    mid_p: bool = False
    spending: Spending = "obrien_fleming"
    futility_z: float | None = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise ConfigError(f"must be in (0, 0.5), got {self.alpha}", field="alpha")
        if not 1 <= self.min_runs <= self.max_runs_per_case:
            raise ConfigError(
                f"need 1 <= min_runs ({self.min_runs}) <= max_runs_per_case ({self.max_runs_per_case})",
                field="min_runs",
            )
        looks = self.schedule()
        if (
            looks[0] < 1
            or looks[-1] > self.max_runs_per_case
            or any(b <= a for a, b in itertools.pairwise(looks))
        ):
            raise ConfigError(
                f"must increase strictly from min_runs to max_runs_per_case, got {list(looks)}", field="looks"
            )
        if self.probe_runs < 1 or self.confirm_runs < 1:
            raise ConfigError("probe_runs and confirm_runs must be at least 1", field="probe_runs")
        if self.spending not in ("obrien_fleming", "pocock"):
            raise ConfigError(f"unknown {self.spending!r}; known: obrien_fleming, pocock", field="spending")

    def schedule(self) -> tuple[int, ...]:
        """Candidate runs per unsettled case at each look, the first look included."""
        if self.looks:
            return (self.min_runs, *self.looks)
        cap = self.max_runs_per_case
        later = {math.ceil(3 * cap / 8), math.ceil(5 * cap / 8), cap}
        return (self.min_runs, *sorted(n for n in later if n > self.min_runs))
