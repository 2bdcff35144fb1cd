"""The prompt rendered from a proposer view."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.proposers.base import ProposerView
from assay.proposers.edits import parse_answer
from assay.proposers.prompt import render_prompt


def view(**changes: object) -> ProposerView:
    base = ProposerView(
        artifact={"b.md": "Use ```code``` fences:\n```\nx\n```\n", "a.py": "x = 1"},
        layer=2,
        dev_cases=[{"id": "c1", "input": "hello " * 200}, {"id": "c2", "vars": {"topic": "tea"}}],
        failures=[{"id": "c1", "how": "output missing an expected element"}],
        last_gate=["progress: dev score 0.50 -> 0.50"],
        history=[{"generation": 1, "description": "shorter intro", "decision": "discard"}],
        trace_paths=["/run/traces/gen-002/c1.json"],
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_prompt_has_every_section_of_the_view() -> None:
    text = render_prompt(view())
    order = ["# Task", "# Layer", "# Artifact files", "# Dev cases", "# Failing cases", "# Trace files",
             "# Why the last change was discarded", "# Earlier changes", "# Answer format"]  # fmt: skip
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert "Layer 2 (core)" in text and "a.py\n```\nx = 1\n```" in text
    assert "b.md\n````\nUse ```code``` fences:\n```\nx\n```\n````" in text
    assert '- c2: vars {"topic": "tea"}' in text and "…" in text and text.count("hello") < 120
    assert "- c1: output missing an expected element" in text and "- /run/traces/gen-002/c1.json" in text
    assert "- gen 1: discard: shorter intro" in text and "- progress: dev score 0.50 -> 0.50" in text
    assert "<<<<<<< SEARCH" in text and "CITES must name at least one trace file" in text


def test_prompt_formats_and_empty_view() -> None:
    empty = render_prompt(view(failures=[], trace_paths=[], last_gate=[], history=[], layer=1))
    assert "(none: every dev case passes)" in empty and "CITES may be `none`" in empty
    assert "# Trace files" not in empty and "# Earlier changes" not in empty and "Layer 1 (surface)" in empty
    whole = render_prompt(view(), format="whole_file")
    assert "FILE: <path of the file to rewrite>" in whole and "<<<<<<< SEARCH" not in whole
    assert "Edit the artifact files in place" in render_prompt(view(), format="direct")
    with pytest.raises(ConfigError, match="unknown answer format 'xml'"):
        render_prompt(view(), format="xml")


def test_the_format_example_is_what_the_parser_reads() -> None:
    text = render_prompt(view())
    example = text[text.index("DESCRIPTION: <one line") :].replace("<path of the file to edit>", "a.py")
    answer = parse_answer(example.replace("<path of a trace file your change is based on>", "c1.json"))
    assert answer.description.startswith("<one line") and answer.citations[0].startswith("c1.json")
    assert [edit.path for edit in answer.edits] == ["a.py"]
    assert answer.edits[0].search == "<lines copied exactly from the current file>"
