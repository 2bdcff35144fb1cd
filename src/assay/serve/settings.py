"""The knobs of the selection service, with the reference defaults (Elo K 32, start 1500, 5 comparisons)."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from typing import Literal

from assay.errors import AssayError
from assay.ratings.base import MIN_COMPARISONS

UnknownVariantPolicy = Literal["reject", "register"]
CostFormula = Literal["seed", "relative"]
COST_FORMULAS = ("seed", "relative")


@dataclass(frozen=True)
class ServeSettings:
    """How ``assay serve`` rates and selects.

    ``token`` guards writes (and reads too when ``require_token_for_reads``); ``unknown_variants`` says whether
    feedback or a selection naming an unregistered variant is rejected or registers it; ``decay_half_life``
    (seconds, None = off) pulls a rating back toward its prior with that half-life while it gets no feedback;
    ``cost_scaling`` is the ``scaling`` of the cost-aware adjustment (0, the router's default, turns it off)
    and ``cost_formula`` how a cost is normalised (see :mod:`assay.serve.selection`); ``busy_timeout`` is how long a SQLite
    write waits for another writer.

    The request limits (see :mod:`assay.serve.limits`): ``max_body_bytes`` per body, ``body_timeout`` seconds to
    send it once the headers are in, ``max_headers`` headers whose names and values take ``max_header_bytes``
    at most.
    """

    db_url: str = "sqlite:///.assay/serve.db"
    k: float = 32.0
    start: float = 1500.0
    min_comparisons: int = MIN_COMPARISONS
    token: str | None = None
    require_token_for_reads: bool = False
    unknown_variants: UnknownVariantPolicy = "reject"
    decay_half_life: float | None = None
    cost_scaling: float = 0.0
    cost_formula: CostFormula = "seed"
    busy_timeout: float = 10.0
    max_body_bytes: int = 1024 * 1024
    body_timeout: float = 30.0
    max_headers: int = 100
    max_header_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        checks = {
            "k": math.isfinite(self.k) and self.k > 0,
            "start": math.isfinite(self.start),
            "min_comparisons": self.min_comparisons >= 0,
            "decay_half_life": self.decay_half_life is None
            or (math.isfinite(self.decay_half_life) and self.decay_half_life > 0),
            "cost_scaling": math.isfinite(self.cost_scaling) and self.cost_scaling >= 0,
            "busy_timeout": self.busy_timeout >= 0,
            "max_body_bytes": self.max_body_bytes > 0,
            "body_timeout": math.isfinite(self.body_timeout) and self.body_timeout > 0,
            "max_headers": self.max_headers > 0,
            "max_header_bytes": self.max_header_bytes > 0,
        }
        for name, ok in checks.items():
            if not ok:
                raise AssayError(f"serve: {name} has an invalid value {getattr(self, name)!r}")
        if self.unknown_variants not in ("reject", "register"):
            raise AssayError(
                f"serve: unknown_variants must be reject or register, got {self.unknown_variants!r}"
            )
        if self.cost_formula not in COST_FORMULAS:
            raise AssayError(f"serve: cost_formula must be seed or relative, got {self.cost_formula!r}")
        if self.require_token_for_reads and not self.token:
            raise AssayError("serve: reads need a token but none is set (ASSAY_SERVE_TOKEN)")


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
