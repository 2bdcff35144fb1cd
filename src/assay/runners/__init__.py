"""Runners turn the artifact plus one case into an Output. One registry (``RUNNERS``) by type name."""

from assay.runners import agent, command, llm, python
from assay.runners.base import RUNNERS, RunContext, Runner

__all__ = ["RUNNERS", "RunContext", "Runner"]
del agent, command, llm, python
