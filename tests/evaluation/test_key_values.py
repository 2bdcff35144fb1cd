"""What a check's program or data file holds that a proposer must not see: literals, numbers and values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evaluation.key_values import (
    MAX_FILES,
    common_word,
    data_values,
    distinctive_literal,
    file_values,
    program_values,
)

PYTHON_CHECK = '''"""Grade the reply against the key: the code must be there."""
import json
import sys

CODE = "QUOKKA-MARZIPAN-5521"
WORD = 'kumquat'
TOTAL = 73_519


def grade(output: str, context: dict) -> dict:
    key = json.load(open(sys.argv[1], encoding="utf-8"))
    if CODE not in output:
        return {"pass": False, "score": 0.0, "reason": f"missing the expected code for {context['vars']}"}
    year, size, limit, ratio = 2024, 4096, 1000, 0.7391
    return {"pass": output.count("x") < TOTAL, "score": 1.0, "reason": "output matches expected_output"}
'''


def test_a_python_check_gives_its_distinctive_literals_and_numbers() -> None:
    found = program_values(PYTHON_CHECK, ".py")
    assert set(found) == {"QUOKKA-MARZIPAN-5521", "kumquat", "73519", "0.7391"}


def test_a_javascript_check_without_its_comments() -> None:
    source = """// the key is ZEBRA-0000 (a comment, never compared)
const fs = require('fs');
/* block: "NOT-A-VALUE-9999" */
module.exports = (output, context) => {
  const data = JSON.parse(fs.readFileSync('data/key.json', 'utf8'));
  const url = "https://example.com/api/v1";
  if (!output.includes("PANGOLIN-LANTERN-8842")) return {pass: false, reason: `missing ${data.name}`};
  return output.toLowerCase().includes('saffron') && output.length < 58213;
};
"""
    assert set(program_values(source, ".js")) == {"PANGOLIN-LANTERN-8842", "saffron", "58213"}


def test_a_shell_check_gives_its_bare_words_too() -> None:
    source = (
        "#!/bin/sh\n# grader\ngrep -q ZEBRA-4471 \"$ASSAY_OUTPUT_FILE\" && grep -qi 'pangolin' || exit 1\n"
    )
    found = program_values(source, "")
    assert "ZEBRA-4471" in found and "pangolin" in found
    assert not {"$ASSAY_OUTPUT_FILE", "grep", "exit"} & set(found)


@pytest.mark.parametrize(
    ("literal", "secret"),
    [
        ("QUOKKA-4471", True),
        ("kumquat", True),
        ("velvetThunderX9", True),
        ("expected output", False),
        ("utf-8", False),
        ("wrong answer for this case", False),
        ("ASSAY_OUTPUT_FILE", False),
        ("readFileSync", False),
        ("amber", False),  # fewer than six letters
        ("missing {name} in %s", False),
    ],
)
def test_distinctive_literals(literal: str, secret: bool) -> None:
    assert distinctive_literal(literal) is secret


def test_data_values_of_every_shape() -> None:
    document = {
        "answer": "amber kestrel",
        "word": "amber",
        "count": 73519,
        "ratio": 0.7391,
        "small": 3,
        "half": 0.5,
        "flag": True,
        "none": None,
        "list": ["a", "the", "obsidian harbour"],
        "nested": {"deep": "saffron"},
    }
    assert set(data_values(json.dumps(document), ".json").values) == {
        "amber kestrel",
        "amber",
        "73519",
        "0.7391",
        "obsidian harbour",
        "saffron",
    }
    yaml_text = "# a comment\nanswer: amber kestrel  # inline\ncodes: [QX-17, kumquat]\nyear: 2024\n"
    assert set(data_values(yaml_text, ".yaml").values) == {"amber kestrel", "QX-17", "kumquat", "2024"}
    assert set(data_values('[answers]\nfirst = "sorrel"\nsecond = 4471\n', ".toml").values) == {
        "sorrel",
        "4471",
    }
    csv_text = 'id,expected,score\nq1,pangolin,0.913\nq2,"velvet, thunder",12\n'
    assert set(data_values(csv_text, ".csv").values) == {"pangolin", "0.913", "velvet, thunder"}
    assert set(data_values("pangolin\nkestrel\n", ".csv").values) == {"pangolin", "kestrel"}  # no header
    assert data_values("first line of the key\n\nzebra\n", ".txt").values == [
        "first line of the key",
        "zebra",
    ]
    jsonl = '{"q": "one", "a": "marmalade"}\n{"q": "two", "a": "kestrel"}\n'
    assert set(data_values(jsonl, ".jsonl").values) == {"one", "marmalade", "two", "kestrel"}


def test_a_schema_file_gives_values_and_property_names() -> None:
    schema = {"$schema": "x", "type": "object", "required": ["ticket_ref"], "properties": {
        "ticket_ref": {"type": "string", "pattern": "^TK-[0-9]{5}$"}, "code": {"enum": ["ESCALATED"]}}}  # fmt: skip
    found = data_values(json.dumps(schema), ".json")
    assert set(found.values) == {"x", "^TK-[0-9]{5}$", "ESCALATED"}
    assert set(found.words) == {"ticket_ref", "code"}


def test_a_file_that_does_not_parse_is_read_as_lines() -> None:
    assert data_values('{"answer": "amber kestrel",\n', ".json").values == ['{"answer": "amber kestrel",']


def test_files_binaries_and_directories(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.mkdir()
    (key / "answers.json").write_text('{"a": "marmalade"}')
    (key / "check.py").write_text('SECRET = "QUOKKA-5521"\n')
    (key / "blob.bin").write_bytes(b"\0\1\2 marmalade-binary")
    (key / "run").write_text("#!/usr/bin/env python3\nprint('KESTREL-2290')\n")
    assert set(file_values(key).values) == {"marmalade", "QUOKKA-5521", "KESTREL-2290"}
    assert file_values(tmp_path / "missing").values == []
    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_FILES + 5):
        (many / f"{i:05d}.txt").write_text(f"value-{i:05d}\n")
    assert len(file_values(many).values) == MAX_FILES


def test_common_words_as_property_names() -> None:
    assert common_word("code") and common_word("Status") and common_word("TYPE")
    assert not common_word("error_code") and not common_word("exitCode") and not common_word("kestrel")
