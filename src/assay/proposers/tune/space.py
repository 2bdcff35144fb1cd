"""The search space of numeric tuning: which numbers are tuned, over which ranges, and the study they belong to.

A range comes from the number itself unless ``evolve.parameters`` says otherwise:

- an int ``v``: from 0 to ``max(10, 4v)`` (mirrored for a negative one; -10 to 10 for 0); on a log scale from
  ``v/10`` to ``10v`` when ``|v| >= 100``;
- a positive float: a log scale across four decades, ``v/100`` to ``100v`` (a constant a structural edit just
  introduced has an arbitrary first value); a negative float: ``10v`` to ``v/10`` (linear); 0.0: -1 to 1;
- a positive float that places a band, the start ``c`` or the width ``w`` of ``0 < s - c < w`` (or the centre and
  half-width of ``abs(s - c) < h``): linear from 0 to four times the band's far end ``c + w``. Where a band sits
  is a position, not a factor: on a log scale a start of 0.1 spends most trials where the band starts at
  nothing, and seldom travels the decades to a start of 5 (ints are linear already).

The sign is kept (a sign flip is a structural edit, left to the operators). A study is one program structure:
the fingerprint of the files with every tuned number taken out, so a structural edit starts a new study while
a change of tuned values stays in the same one.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, replace

from optuna.distributions import BaseDistribution, FloatDistribution, IntDistribution

from assay.config import ParameterSpec
from assay.proposers.base import TunedPoint
from assay.proposers.fingerprint import fingerprint
from assay.proposers.tune.sites import NumberSite, number_sites, write_values

MAX_PARAMETERS = 24  # beyond this many, TPE learns too slowly from a run's few dozen trials
SIGNIFICANT = 4  # floats are written with this many significant digits
BAND_REACH = 4.0  # a float placing a band ranges linearly from 0 to this many times the band's far end
FLOAT_SPAN = 100.0  # a positive float ranges from v / FLOAT_SPAN to v * FLOAT_SPAN
NEAR_INT = 0.3  # around(): an int within 30% of its value (at least 2 either side) ...
NEAR_FACTOR = 2.0  # ... a number on a log scale within a factor of 2 ...
NEAR_SHARE = 0.15  # ... any other within 15% of its range either side


@dataclass(frozen=True)
class Parameter:
    """A tuned number: its site, its range and scale, and whether it is an int."""

    site: NumberSite
    low: float
    high: float
    log: bool
    integer: bool

    @property
    def name(self) -> str:
        return self.site.name

    def distribution(self) -> BaseDistribution:
        if self.integer:
            return IntDistribution(int(self.low), int(self.high), log=self.log)
        return FloatDistribution(self.low, self.high, log=self.log)

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high and (not self.integer or float(value).is_integer())

    def cast(self, value: float) -> int | float:
        """``value`` as this parameter is written: an int, or a float rounded to a few significant digits."""
        if self.integer:
            return round(value)
        rounded = float(f"{value:.{SIGNIFICANT}g}")
        return min(self.high, max(self.low, rounded))

    def around(self) -> Parameter:
        """This parameter over a narrower range centred on its site's value, within its own range."""
        value = float(self.site.value)
        if self.log and value > 0:
            low, high = value / NEAR_FACTOR, value * NEAR_FACTOR
        elif self.integer:
            width = max(2.0, round(NEAR_INT * abs(value)))
            low, high = value - width, value + width
        else:
            width = NEAR_SHARE * (self.high - self.low)
            low, high = value - width, value + width
        low, high = max(self.low, low), min(self.high, high)
        if self.integer:
            low, high = float(math.ceil(low)), float(math.floor(high))
        if not low < high:
            return self
        return replace(self, low=low, high=high)

    def describe(self) -> str:
        kind = "int" if self.integer else "float"
        scale = ", log" if self.log else ""
        return f"{self.name} = {self.site.value!r} ({kind} in [{self.low:g}, {self.high:g}]{scale})"


@dataclass(frozen=True)
class SearchSpace:
    """The tuned parameters of some files, the pinned values, the sites left alone, and the study key."""

    parameters: list[Parameter]
    pinned: list[tuple[NumberSite, int | float]]
    excluded: list[NumberSite]
    study: str

    def point(self) -> TunedPoint:
        """Where the files themselves sit in the study."""
        return TunedPoint(study=self.study, values={p.name: float(p.site.value) for p in self.parameters})

    def distributions(self) -> dict[str, BaseDistribution]:
        return {p.name: p.distribution() for p in self.parameters}

    def around(self) -> SearchSpace:
        """The same study searched near the files' own values (:meth:`Parameter.around`): once a structure's
        best values are roughly known, a draw over the whole range seldom lands closer."""
        return replace(self, parameters=[p.around() for p in self.parameters])


def default_range(value: int | float) -> tuple[float, float, bool]:
    """(low, high, log) for a number with no override (see the module docstring)."""
    if isinstance(value, int):
        if value == 0:
            return -10, 10, False
        size = abs(value)
        low, high, log = (size // 10 or 1, size * 10, True) if size >= 100 else (0, max(10, 4 * size), False)
        return (low, high, log) if value > 0 else (-high, -low, False)
    if value == 0:
        return -1.0, 1.0, False
    if value > 0:
        return value / FLOAT_SPAN, value * FLOAT_SPAN, True
    return value * 10, value / 10, False


def _spec(name: str, specs: dict[str, ParameterSpec]) -> ParameterSpec | None:
    if name in specs:
        return specs[name]
    return next((s for pattern, s in specs.items() if fnmatch.fnmatchcase(name, pattern)), None)


def parameter(site: NumberSite, spec: ParameterSpec | None) -> Parameter:
    """The tuned parameter of ``site``, with ``spec``'s overrides."""
    integer = isinstance(site.value, int) if spec is None or spec.integer is None else spec.integer
    low, high, log = default_range(int(site.value) if integer else float(site.value))
    if site.band_end is not None and not integer and 0 < site.value <= site.band_end:
        low, high, log = 0.0, BAND_REACH * site.band_end, False
    if spec is not None:
        low = spec.low if spec.low is not None else low
        high = spec.high if spec.high is not None else high
        log = spec.log if spec.log is not None else (log and low > 0)
        if low >= high:  # one bound given and past the default other one
            high = low + abs(low) + 1 if spec.high is None else high
            low = high - abs(high) - 1 if spec.low is None and low >= high else low
    if integer:
        low, high = float(int(low)), float(int(high))
        high = max(high, low + 1)
    return Parameter(site, low, high, log and low > 0, integer)


def search_space(files: dict[str, str], specs: dict[str, ParameterSpec] | None = None) -> SearchSpace:
    """The tuning search space of ``files`` (relative path -> text) under ``evolve.parameters``."""
    specs = specs or {}
    parameters: list[Parameter] = []
    pinned: list[tuple[NumberSite, int | float]] = []
    excluded: list[NumberSite] = []
    for path in sorted(files):
        for site in number_sites(path, files[path]):
            spec = _spec(site.name, specs)
            if (spec is not None and spec.exclude) or (spec is None and site.excluded):
                excluded.append(site)
            elif spec is not None and spec.value is not None:
                pinned.append((site, int(spec.value) if isinstance(site.value, int) else spec.value))
            elif len(parameters) < MAX_PARAMETERS:
                parameters.append(parameter(site, spec))
            else:
                excluded.append(site)
    return SearchSpace(parameters, pinned, excluded, _study(files, parameters))


def _study(files: dict[str, str], parameters: list[Parameter]) -> str:
    """The fingerprint of the files with each tuned number replaced by a marker of its kind."""
    markers: dict[str, int | float] = {p.name: 987654321 if p.integer else 987654321.5 for p in parameters}
    try:
        blanked = {**files, **write_values(files, [p.site for p in parameters], markers)}
    except ValueError:
        blanked = files
    return fingerprint(blanked)
