"""The ``agent`` runner: an agent CLI (``claude -p {input}``, ``codex exec {input}``) run in the worktree.

It is the command runner with agent defaults (long timeout, no memory limit, larger output cap): the
template is filled the same way, stdout is the output, and files the agent writes stay in the workdir
where ``file_exists`` checks look for them (``Output.workdir``).
"""

from __future__ import annotations

from assay.config import AgentRunnerConfig
from assay.runners.base import RUNNERS, RunContext
from assay.runners.command import CommandRunner


@RUNNERS.register("agent")
class AgentRunner(CommandRunner):
    """Runs an agent CLI template per case in the candidate's worktree; see :class:`CommandRunner`."""

    name = "agent"
    # An agent's time is mostly waiting for its model: the CPU time of its CLI says nothing of the cost, so the
    # ratchet's time rule stays on wall time (tokens, when reported, are the cost).
    cpu_time = False

    def __init__(self, config: AgentRunnerConfig, context: RunContext) -> None:
        super().__init__(config, context)
