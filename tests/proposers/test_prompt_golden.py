"""The prompt text, byte for byte, for fixed views: the llm proposer's cache keys and the recorded runs depend
on it. The files in ``data/prompts`` were rendered before the view's fields were typed (when they were dicts);
a change to them is a change to every prompt and must be deliberate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assay.evaluation.evaluator import EvalResult
from assay.loop.proposing import retry_note
from assay.loop.state import Retry
from assay.proposers import CaseFailure, DevCase, HistoryEntry, ProposerView, RetryNote
from assay.proposers.context import build_view
from assay.proposers.prompt import render_prompt
from tests.proposers import _planted
from tests.proposers.test_prompt import reflections

GOLDEN = Path(__file__).parent / "data" / "prompts"


def hand(**changes: object) -> ProposerView:
    view = ProposerView(
        artifact={"b.md": "Use ```code``` fences:\n```\nx\n```\n", "a.py": "x = 1"},
        layer=2,
        dev_cases=[
            DevCase("c1", input="hello " * 200),
            DevCase("c2", vars={"topic": "coffee", "n": [1, 2], "é": "ü"}),
            DevCase("c3", vars={"topic": "tea"}),
            DevCase("c4", input="two\nlines — ünïcode"),
            DevCase("c5", vars={}),
            DevCase("c6", input=""),
        ],
        failures=[
            CaseFailure("c1", "output missing an expected element"),
            CaseFailure("c4", "rubric check 1 failed; ünïcode [redacted]"),
        ],
        last_gate=["progress: dev score 0.50 -> 0.50", "regression: case c3"],
        history=[
            HistoryEntry(1, "shorter intro", "discard", "llm", -0.05, same_parent=False),
            HistoryEntry(2, "longer intro", "keep", "mutate", 0, same_parent=True),
            HistoryEntry(3, "proposal failed: no edit", "discard", "tune", None, same_parent=True),
            HistoryEntry(4, "x", "keep", "", 0.125),
        ],
        trace_paths=["/run/traces/gen-002/01-c1.json", "/run/traces/gen-002/02-c4.json"],
        reflections=reflections(),
        more_failing=1,
        best_diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 0\n+x = 1\n",
        retry=RetryNote(
            score=0.4,
            best_score=0.5,
            needed=0.02,
            failures=[CaseFailure("c1", "output missing an expected element"), CaseFailure("c4", "crashed")],
        ),
    )
    return dataclasses.replace(view, **changes)  # type: ignore[arg-type]


def empty() -> ProposerView:
    return hand(
        failures=[],
        reflections=[],
        trace_paths=[],
        last_gate=[],
        history=[],
        best_diff="",
        layer=1,
        retry=RetryNote(score=0.1, best_score=0.2, needed=0.3),
    )


LONG_HISTORY = [HistoryEntry(n, "x " * 3000, "discard") for n in range(1, 4)]
RENDERS = {
    "hand-search_replace": lambda: render_prompt(hand()),
    "hand-whole_file": lambda: render_prompt(hand(), format="whole_file"),
    "hand-direct": lambda: render_prompt(hand(), format="direct"),
    "hand-plain": lambda: render_prompt(hand(reflections=[])),
    "hand-plain-direct": lambda: render_prompt(hand(reflections=[]), format="direct"),
    "hand-tight": lambda: render_prompt(hand(history=LONG_HISTORY, best_diff="", context_tokens=2_600)),
    "hand-tighter": lambda: render_prompt(hand(context_tokens=1_200)),
    "empty": lambda: render_prompt(empty()),
    "empty-direct": lambda: render_prompt(empty(), format="direct"),
}


def golden(name: str) -> str:
    return (GOLDEN / f"{name}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(RENDERS))
def test_the_prompt_of_a_view_is_unchanged(name: str) -> None:
    assert RENDERS[name]() == golden(name)


@pytest.mark.parametrize("format", ["search_replace", "direct"])
def test_the_prompt_of_a_built_view_is_unchanged(tmp_path: Path, format: str) -> None:
    """Through :func:`build_view` and the loop's retry note, redaction included."""
    redactor = _planted.redactor()
    results = _planted.dev_results()
    view = build_view(
        artifact={"prompt.md": "Be helpful.\n"},
        layer=1,
        dev_results=results,
        history=[*_planted.HISTORY, HistoryEntry(3, "d", "keep", "llm", 0.25, same_parent=True)],
        last_gate=_planted.LAST_GATE,
        redactor=redactor,
        trace_dir=tmp_path,
    )
    dev = EvalResult(cases=[r for _, r in results])
    retry = Retry(candidate_id="x", dev=dev, score=0.1, best_score=0.5, needed=0.1)
    view = dataclasses.replace(view, retry=retry_note(retry, [c for c, _ in results], redactor))
    text = render_prompt(view, format=format).replace(str(tmp_path.resolve()), "<traces>")
    assert text == golden(f"planted-{format}")
