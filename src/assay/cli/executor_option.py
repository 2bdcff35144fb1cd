"""``--executor`` on eval, evolve and resume: where case runs execute, overriding ``executor.type``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from assay.config import AssayConfig

EXECUTOR = typer.Option(
    None,
    "--executor",
    help="Where case runs execute: local, or ray (a Ray cluster; see docs/scale.md). Overrides assay.yaml.",
    envvar="ASSAY_EXECUTOR",
)


def apply_executor(config: AssayConfig, executor: str | None) -> None:
    """Set ``executor.type`` from the command line (a BadParameter for an unknown name)."""
    if executor is None:
        return
    if executor not in ("local", "ray"):
        raise typer.BadParameter("expected local or ray", param_hint="--executor")
    config.executor = config.executor.model_copy(update={"type": executor})
