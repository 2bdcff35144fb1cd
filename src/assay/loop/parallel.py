"""Several candidates measured at once (``evolve.parallel_candidates`` = N > 1), decided one by one in
generation order.

Right after decision g the loop starts generation g + N: in the background it takes the generation's proposal
(made ahead, :mod:`assay.loop.pipeline`; takes go in generation order), checks it out in a worktree of its own
and runs what does not depend on the best candidate: L1 and the dev cases. Nothing is logged then. When
generation g + N's turn comes, its proposal and measurement are logged (``committed``, ``measured``) and what
reads the best — the gate with its paired test and reruns, L3, the tournament — runs on the driver as in a run
that measures one candidate at a time. So the event log is the same sequence whichever measurement finished
first, and a generation killed before its decision was logged is measured again on resume.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from assay.loop.context import LoopContext
from assay.loop.generation import Prepared, l2_measurement
from assay.loop.pipeline import ProposalsAhead
from assay.loop.state import LoopState


class CandidatesAhead:
    """The generations measured ahead of their decisions, one worktree each (``trees``: N of them)."""

    def __init__(self, ctx: LoopContext, state: LoopState, ahead: ProposalsAhead, trees: list[Path]) -> None:
        self.ctx = ctx
        self.state = state
        self.ahead = ahead
        self.trees = trees
        self._tasks: dict[int, asyncio.Task[Prepared]] = {}
        self._taken: dict[int, asyncio.Future[int]] = {}  # the proposal number each started generation took

    @property
    def width(self) -> int:
        return len(self.trees)

    def fill(self) -> None:
        """Start the next ``width`` generations that are not started yet (a generation the events show
        committed, resumed, goes on in the run's own worktree instead)."""
        first = self.state.lineage.generation + 1
        pending = self.state.lineage.pending
        for generation in range(first, first + self.width):
            if generation in self._tasks or (
                pending is not None and pending.committed.generation == generation
            ):
                continue
            self._taken[generation] = asyncio.get_running_loop().create_future()
            self._tasks[generation] = asyncio.create_task(self._prepare(generation))

    def started(self, generation: int) -> bool:
        return generation in self._tasks

    async def take(self, generation: int) -> Prepared:
        """The started ``generation``'s candidate, once measured."""
        task = self._tasks.pop(generation)
        try:
            return await task
        finally:
            self._taken.pop(generation, None)

    async def _prepare(self, generation: int) -> Prepared:
        mine = self._taken[generation]
        try:
            earlier = self._taken.get(generation - 1)
            if earlier is not None:
                await asyncio.wait([earlier])
                earlier.result()
            taken = await self.ahead.take(generation, self._numbers())
        except BaseException:
            mine.cancel()
            raise
        mine.set_result(taken.number)
        commit = taken.proposal.commit
        if commit is None:
            return Prepared(taken, None)
        tree = self.trees[generation % self.width]
        self.ctx.git.reset_worktree(tree, commit)
        measured = await l2_measurement(self.ctx, generation, commit, self.ctx.workdir_in(tree))
        return Prepared(taken, measured)

    def _numbers(self) -> set[int]:
        """The proposals taken by started generations (the events say so only once they are decided)."""
        return {f.result() for f in self._taken.values() if f.done() and not f.cancelled()}

    async def close(self) -> None:
        """Stop the generations still measuring (nothing of them was logged)."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
        self._taken.clear()
