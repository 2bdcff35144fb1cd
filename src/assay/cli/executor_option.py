"""``--executor`` on eval, evolve and resume: where case runs execute, overriding ``executor.type``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import typer

if TYPE_CHECKING:
    from assay.config import AssayConfig

EXECUTOR = typer.Option(
    None,
    "--executor",
    help="Where case runs execute: local, or ray (a Ray cluster; see docs/scale.md). Overrides assay.yaml;"
    " `assay resume` runs where the run ran unless given.",
    envvar="ASSAY_EXECUTOR",
)


def checked_executor(executor: str | None) -> Literal["local", "ray"] | None:
    """``--executor`` as given (a BadParameter for an unknown name)."""
    if executor is None:
        return None
    if executor not in ("local", "ray"):
        raise typer.BadParameter("expected local or ray", param_hint="--executor")
    return "ray" if executor == "ray" else "local"


def apply_executor(config: AssayConfig, executor: str | None) -> None:
    """Set ``executor.type`` from the command line (a BadParameter for an unknown name)."""
    checked = checked_executor(executor)
    if checked is not None:
        config.executor = config.executor.model_copy(update={"type": checked})
