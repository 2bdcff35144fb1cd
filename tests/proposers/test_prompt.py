"""The prompt rendered from a proposer view: inline cases for the llm proposer, trace paths for the agent."""

from __future__ import annotations

import dataclasses

import pytest

from assay.errors import ConfigError
from assay.proposers.base import CaseFailure, DevCase, HistoryEntry, ProposerView, Reflection
from assay.proposers.edits import parse_answer
from assay.proposers.prompt import render_prompt


def reflections() -> list[Reflection]:
    return [
        Reflection(
            label=1,
            id="c1",
            kind="crash",
            input={"input": "hello " * 200},
            output_head="partial answer",
            output_chars=14,
            stderr_tail="ValueError: cannot parse 'qux'",
            error="exited 1",
            exit_code=1,
            seconds=0.25,
            regressed=True,
            verdicts=[("contains", "output missing an expected element"), ("regex", "passed")],
        ),
        Reflection(
            label=2,
            id="c3",
            kind="passed",
            input={"vars": {"topic": "tea"}},
            output_head="Tea is served.",
            output_chars=14,
            verdicts=[("contains", "passed")],
        ),
    ]


def view(**changes: object) -> ProposerView:
    base = ProposerView(
        artifact={"b.md": "Use ```code``` fences:\n```\nx\n```\n", "a.py": "x = 1"},
        layer=2,
        dev_cases=[
            DevCase("c1", input="hello " * 200),
            DevCase("c2", vars={"topic": "coffee"}),
            DevCase("c3", vars={"topic": "tea"}),
        ],
        failures=[CaseFailure("c1", "output missing an expected element")],
        last_gate=["progress: dev score 0.50 -> 0.50"],
        history=[
            HistoryEntry(1, "shorter intro", "discard", delta=-0.05),
            HistoryEntry(2, "longer intro", "keep", same_parent=True),
        ],
        trace_paths=["/run/traces/gen-002/01-c1.json"],
        reflections=reflections(),
        best_diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 0\n+x = 1\n",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_llm_prompt_shows_the_cases_inline_and_numbered() -> None:
    text = render_prompt(view())
    order = ["# Task", "# Layer", "# Artifact files", "# What happened", "[1] case c1", "## Passing cases",
             "[2] case c3", "# Why the last change was discarded", "# What the best version so far",
             "# Earlier changes", "# Other dev cases", "# Answer format"]  # fmt: skip
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert "Layer 2 (core)" in text and "a.py\n```\nx = 1\n```" in text
    assert "b.md\n````\nUse ```code``` fences:\n```\nx\n```\n````" in text
    assert "1 of 3 dev cases fail" in text
    assert "[1] case c1 — fails (crash), passed in the baseline" in text
    assert (
        "```\nValueError: cannot parse 'qux'\n```" in text
        and "error: exited 1; exit code 1; took 0.25 s" in text
    )
    assert "checks: 1 contains: output missing an expected element | 2 regex: passed" in text
    assert '[2] case c3 — passes\nvars: {"topic": "tea"}\noutput:\n```\nTea is served.\n```' in text
    # Only the case not shown inline is listed with its input; no trace path for a chat model.
    assert '- c2: vars {"topic": "coffee"}' in text and "- c1: input" not in text
    assert "/run/traces" not in text and "# Not shown" not in text
    assert "- gen 1: discard (-0.0500): shorter intro" in text
    assert "- gen 2 from this parent: keep: longer intro" in text
    assert "```diff\n--- a/a.py" in text and "+x = 1\n```" in text
    assert "CITES: <the numbers of the cases" in text and "by its number" in text


def test_output_cut_in_the_middle_is_said() -> None:
    cut = reflections()[0]
    cut.output_head, cut.output_tail, cut.output_chars = "START", "END", 90_000
    text = render_prompt(view(reflections=[cut]))
    assert "output (90000 characters; the start and the end):\n```\nSTART\n```\n[…]\n```\nEND\n```" in text


def test_agent_prompt_keeps_trace_paths() -> None:
    text = render_prompt(view(), format="direct")
    order = ["# Task", "# Layer", "# Artifact files", "# Dev cases", "# Failing cases", "# Trace files",
             "# Why the last change was discarded", "# Earlier changes", "# Answer format"]  # fmt: skip
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert "- /run/traces/gen-002/01-c1.json" in text and "CITES must name at least one trace file" in text
    assert "Edit the artifact files in place" in text and "[1] case" not in text
    assert "…" not in text or text.count("hello") < 120


def test_prompt_formats_and_empty_view() -> None:
    empty = render_prompt(
        view(failures=[], reflections=[], trace_paths=[], last_gate=[], history=[], best_diff="", layer=1)
    )
    assert "(none: every dev case passes)" in empty and "CITES may be `none`" in empty
    assert (
        "# Earlier changes" not in empty and "Layer 1 (surface)" in empty and "# What the best" not in empty
    )
    whole = render_prompt(view(), format="whole_file")
    assert "FILE: <path of the file to rewrite>" in whole and "<<<<<<< SEARCH" not in whole
    # A view without inline cases (built by hand) lists the failing cases by id, to cite by id.
    plain = render_prompt(view(reflections=[]))
    assert "# Failing cases\n- c1: output missing an expected element" in plain
    assert (
        "CITES: <id or trace file of a failing case" in plain and "- /run/traces/gen-002/01-c1.json" in plain
    )
    with pytest.raises(ConfigError, match="unknown answer format 'xml'"):
        render_prompt(view(), format="xml")


def test_the_format_example_is_what_the_parser_reads() -> None:
    text = render_prompt(view())
    example = text[text.index("DESCRIPTION: <one line") :].replace("<path of the file to edit>", "a.py")
    answer = parse_answer(
        example.replace("<the numbers of the cases your change is based on, e.g. ", "[1], ")
    )
    assert answer.description.startswith("<one line") and answer.citations[:2] == ["[1]", "[2]"]
    assert [edit.path for edit in answer.edits] == ["a.py"]
    assert answer.edits[0].search == "<lines copied exactly from the current file>"


def test_a_heading_goes_with_its_pieces_and_what_is_left_out_is_said() -> None:
    history = [HistoryEntry(n, "x " * 3000, "discard") for n in range(1, 4)]
    text = render_prompt(view(history=history, best_diff="", context_tokens=2_600))
    assert "# Earlier changes" not in text and "- gen " not in text
    assert "Left out to stay within 2600 tokens: " in text and "3 earlier changes" in text
    assert "[1] case c1" in text and text.index("# Not shown") < text.index("# Answer format")
    roomy = render_prompt(view(history=history, best_diff="", context_tokens=12_000))
    assert "# Earlier changes (newest last)\n- gen 1: discard: x x" in roomy and "# Not shown" not in roomy
