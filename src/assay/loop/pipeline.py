"""Proposals ahead of evaluations (SIFT's asynchronous expansion), deterministic: with ``evolve.pipeline`` =
depth d > 1, a producer task makes proposal n from the state right after decision n − d (the baseline for the
first ones) while generations are evaluated, and generation g takes, among the proposals numbered up to
g + d − 2 that no generation took yet, the one whose parent has the best rating rank plus accuracy rank. With
``width`` w generations measured at once (:mod:`assay.loop.parallel`), generation g starts right after decision
g − w, so it takes among the proposals numbered up to g + d − 1 − w (w = 1: g + d − 2), and d must be > w.

So while a candidate is evaluated the next proposal is being made, and which proposal a generation gets depends
only on the run's events, not on timing: a resumed run, or the same seed run again, takes the same ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
from collections.abc import Awaitable, Callable, Collection
from functools import partial
from pathlib import Path

from assay.loop.context import LoopContext
from assay.loop.events import Decided, Event, Proposed, Spend
from assay.loop.proposing import Basis, choose_parent, make_proposal, priority
from assay.loop.state import LoopState, apply

# Makes, logs and returns proposal ``number`` from ``basis``.
Make = Callable[[int, Basis], Awaitable[Proposed]]


class ProposalsAhead:
    """The producer of proposals made ahead, and the rule by which generations take them."""

    def __init__(self, make: Make, state: LoopState, *, depth: int, width: int = 1) -> None:
        if depth < 2 or depth <= width:
            raise ValueError(
                f"a pipeline of width {width} needs a depth above it and of at least 2, got {depth}"
            )
        self.make = make
        self.state = state
        self.depth = depth
        self.width = width
        self.bases: dict[int, Basis] = {}
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    def needed_from(self) -> int:
        """The first decision whose basis the producer will still need."""
        return max(0, self.state.pipeline.last_proposal + 1 - self.depth)

    async def add_basis(self, basis: Basis) -> None:
        """The state after decision ``basis.after`` (call after the baseline and after every decision)."""
        self.bases[basis.after] = basis
        async with self._changed:
            self._changed.notify_all()

    def start(self) -> None:
        """Start producing, after the last proposal the events know (call from inside the event loop)."""
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            await self._produce()
        finally:  # a failed producer wakes the generation waiting for it, which raises its error
            async with self._changed:
                self._changed.notify_all()

    async def _produce(self) -> None:
        number = self.state.pipeline.last_proposal
        while True:
            number += 1
            after = max(0, number - self.depth)
            async with self._changed:
                await self._changed.wait_for(partial(operator.contains, self.bases, after))
            basis = self.bases[after]
            await self.make(number, basis)
            for old in [k for k in self.bases if k < after]:
                del self.bases[old]
            async with self._changed:
                self._changed.notify_all()

    async def take(self, generation: int, taken: Collection[int] = ()) -> Proposed:
        """The proposal generation ``generation`` evaluates (waiting for the producer when needed); ``taken``:
        the numbers of proposals earlier generations took that the events do not say yet."""
        assert self._task is not None, "start() the pipeline first"
        last = generation + self.depth - 1 - self.width

        def ready() -> bool:
            return self.state.pipeline.last_proposal >= last or self._task is None or self._task.done()

        async with self._changed:
            await self._changed.wait_for(ready)
        if self._task.done() and self.state.pipeline.last_proposal < last:
            self._task.result()  # the producer failed: raise its error here
        waiting = [p for n, p in self.state.pipeline.proposals.items() if n <= last and n not in taken]
        return min(waiting, key=lambda p: (p.priority, p.number))

    async def close(self) -> list[int]:
        """Stop producing; return the numbers of the proposals made but never taken."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None
        return sorted(self.state.pipeline.proposals)


async def start_ahead(
    ctx: LoopContext, state: LoopState, events: list[Event], tree: Path, *, fresh: Callable[[], LoopState]
) -> ProposalsAhead:
    """Start the producer of proposals made ahead (in the worktree ``tree``), given the bases it still needs:
    the state after each of those decisions, folded again from ``events`` on a ``fresh`` state."""
    ctx.git.remove_worktree(tree)
    ctx.git.add_worktree(tree, ctx.run.base_commit)

    async def make(number: int, basis: Basis) -> Proposed:
        parent, _ = choose_parent(ctx, basis, f"proposal:{number}")
        made = await make_proposal(
            ctx, state, basis, worktree=tree, parent=parent, number=number, label="proposal"
        )
        proposal = made.model_copy(update={"number": number})
        if proposal.commit is not None:
            ctx.git.set_ref(f"refs/assay/{ctx.run.run_id}/proposal-{number:04d}", proposal.commit)
        event = Proposed(
            number=number,
            proposal=proposal,
            priority=priority(basis, parent),
            spent=Spend(tokens=proposal.tokens, cost_usd=proposal.cost_usd),
        )
        ctx.emit(state, event)
        return event

    evolve = ctx.config.evolve
    ahead = ProposalsAhead(make, state, depth=evolve.pipeline_depth, width=evolve.parallel_candidates)
    first = ahead.needed_from()
    if first < state.lineage.generation:
        replay = fresh()
        for event in events:
            apply(replay, event)
            if isinstance(event, Decided) and first <= replay.lineage.generation < state.lineage.generation:
                await ahead.add_basis(Basis.of(replay))
    await ahead.add_basis(Basis.of(state))
    ahead.start()
    return ahead
