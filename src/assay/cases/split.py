"""The deterministic dev / holdout / regression split, made once and kept in a split file.

First split of a set: case ids are ordered by ``sha256(id)`` and cut at the configured fractions with
exact proportions (largest remainder: 20 cases at 0.7/0.2/0.1 give 14/4/2). With fewer than
``min_cases_for_holdout`` cases there is no holdout; its share goes to dev.

The result is written atomically as ``{"version": 1, "fractions": {...}, "splits": {id: split}}`` and
never silently redone. Later calls reuse the file: ids already in it keep their split, new ids are
placed by hash threshold (``sha256(id)`` read as a number in [0, 1) against the file's cumulative
fractions) and appended; ids no longer among the cases stay in the file. If the configured fractions
differ from the file's, the file wins and a warning is returned. Delete the file to re-split.

``assign_splits`` returns a :class:`SplitResult`: a ``dict[str, Split]`` for the given cases, with
``warnings`` (strings for the user), ``added`` (ids newly written to the file) and ``splits`` (the
mapping as a plain dict).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.config import SplitConfig
from assay.errors import ConfigError
from assay.fsutil import durable_write_bytes
from assay.model import Case, Split
from assay.safeload import load_json

VERSION = 1
_ORDER = (Split.DEV, Split.HOLDOUT, Split.REGRESSION)
_FIX = "delete it to re-split (assignments may change)"


class SplitResult(dict[str, Split]):
    """The split of each given case id, plus warnings for the user and the ids added to the file."""

    def __init__(self, mapping: Mapping[str, Split], warnings: list[str], added: list[str]) -> None:
        super().__init__(mapping)
        self.warnings = warnings
        self.added = added

    @property
    def splits(self) -> dict[str, Split]:
        """The mapping as a plain dict (for callers that unpack ``result.splits, result.warnings``)."""
        return dict(self)


def id_hash(case_id: str) -> str:
    return hashlib.sha256(case_id.encode("utf-8")).hexdigest()


def _unit(case_id: str) -> float:
    """The id's hash as a number in [0, 1)."""
    return int(id_hash(case_id)[:16], 16) / 2**64


def _fractions(config: SplitConfig) -> dict[str, float]:
    return {"dev": config.dev, "holdout": config.holdout, "regression": config.regression}


def _effective(fractions: Mapping[str, float], total: int, min_for_holdout: int) -> list[float]:
    dev, holdout, regression = (fractions[s.value] for s in _ORDER)
    if total < min_for_holdout:
        return [dev + holdout, 0.0, regression]
    return [dev, holdout, regression]


def _counts(n: int, shares: list[float]) -> list[int]:
    """Exact proportions by largest remainder; ties go to the earlier split (dev first)."""
    raw = [round(share * n, 9) for share in shares]
    counts = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def initial_split(ids: Iterable[str], config: SplitConfig) -> dict[str, Split]:
    """Split a fresh set of ids: order by hash, cut at exact proportions."""
    ordered = sorted(set(ids), key=lambda i: (id_hash(i), i))
    counts = _counts(len(ordered), _effective(_fractions(config), len(ordered), config.min_cases_for_holdout))
    out: dict[str, Split] = {}
    start = 0
    for split, count in zip(_ORDER, counts, strict=True):
        for case_id in ordered[start : start + count]:
            out[case_id] = split
        start += count
    return dict(sorted(out.items()))


def threshold_split(case_id: str, shares: list[float]) -> Split:
    """Place one id by its hash against cumulative fractions."""
    u, edge = _unit(case_id), 0.0
    for split, share in zip(_ORDER, shares, strict=True):
        edge += share
        if u < edge:
            return split
    return next(s for s, share in zip(reversed(_ORDER), reversed(shares), strict=True) if share > 0)


def _read(split_file: Path) -> tuple[dict[str, float], dict[str, Split]]:
    def corrupt(why: str) -> ConfigError:
        return ConfigError(f"corrupt split file ({why}); {_FIX}", file=split_file)

    try:
        data: Any = load_json(split_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise corrupt(f"invalid JSON at line {exc.lineno}, column {exc.colno}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise corrupt(f"cannot read: {exc}") from None
    except ValueError as exc:  # too deep, or a number too long
        raise corrupt(str(exc)) from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise corrupt(f"expected a JSON object with version {VERSION}")
    fractions, splits = data.get("fractions"), data.get("splits")
    names = [s.value for s in _ORDER]
    if not isinstance(fractions, dict) or sorted(fractions) != sorted(names):
        raise corrupt(f"'fractions' must give {', '.join(names)}")
    if not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in fractions.values()
    ):
        raise corrupt("'fractions' must be numbers between 0 and 1")
    if not isinstance(splits, dict):
        raise corrupt("'splits' must map case ids to dev, holdout or regression")
    out: dict[str, Split] = {}
    for case_id, split in splits.items():
        if split not in names:
            raise corrupt(f"case {case_id!r} has split {split!r}; expected one of {', '.join(names)}")
        out[case_id] = Split(split)
    return {k: float(v) for k, v in fractions.items()}, out


def _write(split_file: Path, fractions: Mapping[str, float], splits: Mapping[str, Split]) -> None:
    payload = {
        "version": VERSION,
        "fractions": dict(fractions),
        "splits": {k: v.value for k, v in splits.items()},
    }
    durable_write_bytes(split_file, (json.dumps(payload, indent=2) + "\n").encode("utf-8"))


def assign_splits(cases: Iterable[Case], config: SplitConfig, split_file: Path) -> SplitResult:
    """Assign each case to dev, holdout or regression, creating or extending ``split_file``.

    Returns a :class:`SplitResult` (a dict of id → Split for the given cases, with ``warnings`` and
    ``added``). Raises ConfigError if the split file is corrupt.
    """
    ids = list(dict.fromkeys(case.id for case in cases))
    split_file = Path(split_file)
    if not split_file.exists():
        if not ids:
            return SplitResult({}, [], [])
        splits = initial_split(ids, config)
        _write(split_file, _fractions(config), splits)
        return SplitResult({i: splits[i] for i in ids}, [], list(splits))

    fractions, splits = _read(split_file)
    warnings: list[str] = []
    wanted = _fractions(config)
    if any(abs(wanted[k] - fractions[k]) > 1e-9 for k in wanted):
        warnings.append(
            f"{split_file}: the split was made with fractions {_show(fractions)}; the config asks for "
            f"{_show(wanted)}. Keeping the existing split; delete the file to re-split."
        )
    added = [i for i in ids if i not in splits]
    if added:
        total = len(set(splits) | set(ids))
        shares = _effective(fractions, total, config.min_cases_for_holdout)
        for case_id in added:
            splits[case_id] = threshold_split(case_id, shares)
        _write(split_file, fractions, splits)
    return SplitResult({i: splits[i] for i in ids}, warnings, added)


def _show(fractions: Mapping[str, float]) -> str:
    return "/".join(f"{k} {fractions[k]:g}" for k in ("dev", "holdout", "regression"))


def select(cases: Iterable[Case], splits: Mapping[str, Split], which: str | Split) -> list[Case]:
    """The cases of one split (``dev``, ``holdout``, ``regression``) or ``all``, in their given order."""
    name = which.value if isinstance(which, Split) else str(which).strip().lower()
    choices = [*(s.value for s in _ORDER), "all"]
    if name not in choices:
        raise ConfigError(f"unknown split {which!r}; expected one of {', '.join(choices)}", field="split")
    cases = list(cases)
    missing = [c.id for c in cases if c.id not in splits]
    if missing:
        raise ConfigError(f"case {missing[0]!r} has no split; assign splits before selecting", field="split")
    if name == "all":
        return cases
    return [c for c in cases if splits[c.id].value == name]
