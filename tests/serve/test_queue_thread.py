"""The queue thread's batches: under load a batch waits for company (at most ``company`` after its first item),
one item at a time never waits, and an item that waited while the thread was busy waits no more."""

from __future__ import annotations

import threading
import time

from assay.serve.queue_thread import QueueThread


class _Recorder(QueueThread[float]):
    """Items are the times they were put; each batch is recorded with the time the thread took it. After
    :meth:`busy` the next batch keeps the thread ``hold`` seconds."""

    thread_name = "assay-test-queue"

    def __init__(self, company: float) -> None:
        super().__init__(company)
        self.batches: list[tuple[float, list[float]]] = []
        self.hold = 0.0
        self.held = threading.Event()
        self.free_at = 0.0

    def busy(self, hold: float) -> None:
        self.hold = hold

    def _run(self) -> None:
        for batch in self._batches(limit=1000):
            self.batches.append((time.monotonic(), batch))
            if self.hold:
                self.held.set()
                time.sleep(self.hold)
                self.hold, self.free_at = 0.0, time.monotonic()

    def put_every(self, gap: float, count: int) -> None:
        start = time.monotonic()
        for i in range(count):
            while time.monotonic() < start + i * gap:
                time.sleep(gap / 10)
            self._put(time.monotonic())

    def waits(self) -> list[float]:
        """How long each batch's first item waited for the thread to take its batch."""
        return [taken - items[0] for taken, items in self.batches]


def test_items_at_a_fast_pace_are_batched_and_none_waits_much_longer_than_company() -> None:
    company = 0.05
    waiting, eager = _Recorder(company), _Recorder(0.0)
    for recorder in (waiting, eager):
        recorder.put_every(0.002, 150)  # 0.3 s at 500 items a second
        recorder.close()
    sizes = [len(items) for _, items in waiting.batches]
    assert sum(sizes) == 150 and sum(len(items) for _, items in eager.batches) == 150
    # Once the pace is known, a batch gathers what arrives over `company` seconds (about 25 items); without a
    # wait for company the thread takes every item nearly alone.
    assert max(sizes) >= 10
    assert len(waiting.batches) <= len(eager.batches) / 3
    # The last batch is closed by `close`, not by its timer; every other first item waited about `company`.
    assert max(waiting.waits()[:-1]) < company + 0.1


def test_items_one_at_a_time_never_wait_for_company() -> None:
    company = 0.05
    recorder = _Recorder(company)
    recorder.put_every(0.15, 6)  # items three times `company` apart: not a pace that fills a batch
    time.sleep(0.05)
    recorder.close()
    assert [len(items) for _, items in recorder.batches] == [1] * 6
    assert max(recorder.waits()) < company / 2


def test_items_queued_while_the_thread_was_busy_are_taken_at_once() -> None:
    company = 0.05
    recorder = _Recorder(company)
    recorder.put_every(0.002, 100)  # the pace of a busy service: batches wait for company from now on
    recorder.busy(0.3)
    assert recorder.held.wait(5)
    before = len(recorder.batches)
    recorder.put_every(0.002, 20)  # queued while the thread works on one batch
    time.sleep(0.3)
    recorder.close()
    taken, items = recorder.batches[before]
    # The batch after the long one holds what queued meanwhile; its first item had waited longer than `company`
    # already, so the thread took it as soon as it was free instead of waiting again.
    assert len(items) == 20
    assert taken - items[0] > company
    assert taken - recorder.free_at < company / 2
