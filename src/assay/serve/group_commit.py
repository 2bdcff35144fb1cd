"""Group commit: one writer thread per process applies the feedbacks that arrived while the last batch
committed, together, in one transaction; each request still gets its own answer or refusal.

Under load every feedback would otherwise take its own row locks and round trips, and feedbacks about the same
variants queue on those locks one transaction at a time. A batch takes the locks once. When feedback arrives
one at a time the batch is that one feedback; under load a batch waits up to 2 ms for company (see
:mod:`assay.serve.queue_thread`).

An HTTP request awaits its answer on the event loop (:meth:`GroupCommit.submit_async`): no thread of the
request pool is held waiting for the writer, and the writer hands a batch's answers back with one call into the
loop (one wake-up of the loop per batch, not per request).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

from assay.serve.database import Database, HeldConnection
from assay.serve.errors import ApiError
from assay.serve.feedback import apply_batch
from assay.serve.group_read import settle
from assay.serve.queue_thread import QueueThread
from assay.serve.schemas import FeedbackOut
from assay.serve.settings import ServeSettings
from assay.serve.validation import Feedback

MAX_BATCH = 256


class _Pending:
    """One request waiting for its answer: on a thread (``done``) or in an event loop (``future``)."""

    def __init__(self, feedback: Feedback, future: asyncio.Future[FeedbackOut] | None = None) -> None:
        self.feedback = feedback
        self.future = future
        self.done = threading.Event() if future is None else None
        self.answer: FeedbackOut | BaseException | None = None


def _settle(batch: Sequence[_Pending], answers: Sequence[FeedbackOut | BaseException]) -> None:
    """Hand each waiting request its answer (from the writer thread): one call into each event loop."""
    waiting = []
    for pending, answer in zip(batch, answers, strict=True):
        pending.answer = answer
        if pending.future is not None:
            waiting.append((pending.future, answer))
        else:
            assert pending.done is not None
            pending.done.set()
    settle(waiting)


class GroupCommit(QueueThread[_Pending]):
    """Feedback in, answers out, written in batches by one thread (started on first use; :meth:`close` finishes
    the queued feedback and stops it)."""

    thread_name = "assay-serve-writer"

    def __init__(self, db: Database, settings: ServeSettings, max_batch: int = MAX_BATCH) -> None:
        super().__init__()
        self.db = db
        self.settings = settings
        self.max_batch = max_batch
        self.batches = 0
        self.feedbacks = 0

    def submit(self, feedback: Feedback) -> FeedbackOut:
        """Apply ``feedback`` (with whatever else is waiting) and return its answer, or raise its refusal."""
        pending = _Pending(feedback)
        self._put(pending)
        assert pending.done is not None
        pending.done.wait()
        if isinstance(pending.answer, BaseException):
            raise pending.answer
        assert pending.answer is not None
        return pending.answer

    async def submit_async(self, feedback: Feedback) -> FeedbackOut:
        """:meth:`submit` for a caller in an event loop: awaits the answer without blocking a thread."""
        future: asyncio.Future[FeedbackOut] = asyncio.get_running_loop().create_future()
        self._put(_Pending(feedback, future))
        # shield: a client that goes away must not cancel what the writer will apply anyway
        return await asyncio.shield(future)

    def _run(self) -> None:
        held = self.db.held()
        try:
            self._serve(held)
        finally:
            held.close()

    def _serve(self, held: HeldConnection) -> None:
        for batch in self._batches(self.max_batch):
            self._answer(batch, held)

    def _answer(self, batch: Sequence[_Pending], held: HeldConnection) -> None:
        answers: Sequence[FeedbackOut | BaseException] | BaseException = self._write(
            [p.feedback for p in batch], held
        )
        if isinstance(answers, BaseException) and len(batch) > 1:
            # One feedback the database refuses must not fail the others: apply them one by one.
            answers = [self._single(p.feedback, held) for p in batch]
        _settle(batch, [answers] * len(batch) if isinstance(answers, BaseException) else answers)
        self.batches += 1
        self.feedbacks += len(batch)

    def _single(self, feedback: Feedback, held: HeldConnection) -> FeedbackOut | BaseException:
        answer = self._write([feedback], held)
        return answer if isinstance(answer, BaseException) else answer[0]

    def _write(
        self, feedbacks: list[Feedback], held: HeldConnection
    ) -> list[FeedbackOut | ApiError] | BaseException:
        try:
            return self.db.write(lambda conn: apply_batch(conn, self.settings, feedbacks, time.time()), held)
        except Exception as exc:  # the waiting request raises it
            return exc
