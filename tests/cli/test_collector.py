"""The garbage collector at start-up: off while a command that runs cases imports, frozen and on when they run."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import collector


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    yield
    gc.enable()
    gc.unfreeze()


def test_only_commands_that_run_cases_pause_the_collector() -> None:
    for command in ("cases", "status", "serve", "report", None):
        assert collector.pause_for(command) is False and gc.isenabled()
    assert collector.pause_for("eval") is True and not gc.isenabled()
    assert collector.pause_for("eval") is False  # already off: nothing to restore later


def test_the_work_runs_with_the_start_up_frozen_and_the_collector_on() -> None:
    collector.pause_for("evolve")
    before = gc.get_freeze_count()
    seen: list[bool] = []

    async def work() -> int:
        seen.append(gc.isenabled())
        return 7

    assert collector.run_command(work()) == 7
    assert seen == [True] and gc.get_freeze_count() > before


def test_main_gives_the_collector_back_to_a_caller_in_the_same_process(tmp_path: Path) -> None:
    from assay.cli.main import main

    with pytest.raises(SystemExit) as ended:
        main(["eval", "-c", str(tmp_path / "missing.yaml")])
    assert ended.value.code == 2 and gc.isenabled()
