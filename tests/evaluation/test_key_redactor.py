"""The project's redactor hides what check programs and their data files hold, in every form a reader could
undo, judged by the independent leak detector of tests/leaks.py; what the proposer is shown anyway stays."""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

from assay.cases import load_cases
from assay.config import load_config
from assay.evaluation.key_redactor import key_redactor
from assay.model import Case
from assay.proposers.redaction import REDACTED, Redactor
from tests.leaks import leaked

SCRIPT_CODE = "QUOKKA-MARZIPAN-5521"
SCRIPT_NUMBER = "73519"
PYTHON_FILE_CODE = "PANGOLIN-LANTERN-8842"
JS_FILE_CODE = "KUMQUAT-3391"
DATA = {
    "answer": "amber kestrel",
    "word": "amber",
    "ratio": 0.7391,
    "phrase": "the lantern of the obsidian harbour",
}
CSV_VALUE = "sorrel"
PLANTED = [SCRIPT_CODE, SCRIPT_NUMBER, PYTHON_FILE_CODE, JS_FILE_CODE, "amber kestrel", "0.7391",
           "the lantern of the obsidian harbour", "harbour of obsidian"]  # fmt: skip
SHORT_PLANTED = ["amber", CSV_VALUE]  # single words: found as whole words by the leak check below


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def native_project(root: Path) -> Path:
    return write(
        root,
        {
            "prompt.md": "Answer the customer about their parcel.\nMention the shared-term harbour.\n",
            "checks/check_key.py": (
                "import json, sys\n"
                f"CODE = {SCRIPT_CODE!r}\nTOTAL = {SCRIPT_NUMBER}\n"
                "key = json.load(open(sys.argv[1]))\n"
                "out = sys.stdin.read()\n"
                "sys.exit(0 if CODE in out and key['answer'] in out else 1)\n"
            ),
            "checks/grade.py": f"def grade(output, context):\n    return {PYTHON_FILE_CODE!r} in output\n",
            "checks/grade.js": f"module.exports = (output) => output.includes({JS_FILE_CODE!r});\n",
            "data/key.json": json.dumps(DATA),
            "data/table.csv": f"id,expected\nq1,{CSV_VALUE}\nq2,harbour of obsidian\nq3,parcel\n",
            "cases.yaml": (
                "cases:\n"
                + "".join(
                    f"  - {{id: c{i}, input: 'where is my parcel {i}', checks: [{{type: contains, value: ok}}]}}\n"
                    for i in range(4)
                )
            ),
            "assay.yaml": (
                "artifact: {kind: prompt, paths: [prompt.md]}\n"
                "cases: {files: [cases.yaml]}\n"
                "runner: {type: command, command: 'cat prompt.md'}\n"
                "checks:\n"
                "  - {type: script, value: 'python checks/check_key.py data/key.json data/table.csv'}\n"
                "  - {type: python, value: 'checks/grade.py:grade'}\n"
                "  - {type: javascript, value: 'file://checks/grade.js'}\n"
            ),
        },
    )


def redactor_of(root: Path) -> Redactor:
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / f for f in config.cases.files], default_checks=list(config.checks))
    return key_redactor(config, cases[:3], cases[3:])


def echoes(value: str) -> list[str]:
    """A value as a careless (or hostile) program prints it."""
    spaced = " ".join(value)
    half = len(value) // 2
    return [
        value,
        value.lower(),
        value.upper().replace(" ", "_"),
        spaced,
        value[:half] + "\n" + value[half:],
        base64.b64encode(value.encode()).decode(),
        value.encode().hex(),
        urllib.parse.quote(value),
    ]


def leaks_of(redactor: Redactor) -> list[tuple[str, str, str]]:
    found = []
    for value in PLANTED + SHORT_PLANTED:
        for form in echoes(value):
            text = redactor.redact(f"the reply said: {form}; the end")
            found += [(value, form, text) for _ in leaked(text, [value]) if len(value) >= 6]
            if value in SHORT_PLANTED and f" {value} " in f" {text.lower()} ".replace(";", " "):
                found.append((value, form, text))
    return found


def test_check_programs_and_data_files_are_hidden_in_every_form(tmp_path: Path) -> None:
    redactor = redactor_of(native_project(tmp_path / "p"))
    assert leaks_of(redactor) == []


def test_a_line_holding_no_key_value_is_left_as_it_is(tmp_path: Path) -> None:
    redactor = redactor_of(native_project(tmp_path / "p"))
    for line in (
        "Your parcel left our warehouse on Monday and should arrive within three days.",
        "Traceback (most recent call last): ValueError: invalid literal for int() with base 10",
        "exit code 3: the harbour master keeps the lantern lit",
        "wrote 4096 bytes in 2024 at 1000 rows per second; the expected output follows",
    ):
        assert redactor.redact(line) == line


def test_what_the_proposer_sees_anyway_is_no_secret(tmp_path: Path) -> None:
    root = native_project(tmp_path / "p")
    redactor = redactor_of(root)
    # `parcel` is in the data file, but also in the prompt and the dev inputs; `shared-term` only in the prompt.
    assert "parcel" not in redactor.secrets
    assert redactor.redact("your parcel is here") == "your parcel is here"
    (root / "data" / "key.json").write_text(json.dumps({**DATA, "extra": "shared-term"}))
    assert "shared-term" not in redactor_of(root).secrets


SCHEMA = {
    "type": "object",
    "required": ["code", "status", "ticket_ref"],
    "properties": {"ticket_ref": {"type": "string"}, "status": {"enum": ["ESCALATED-TIER-3"]}},
}


def test_a_schema_property_name_is_a_whole_word_unless_the_artifact_names_it(tmp_path: Path) -> None:
    root = write(
        tmp_path / "s",
        {
            "prompt.md": "Reply in JSON with a status field.\n",
            "cases.yaml": "cases:\n  - {id: a, input: hi}\n",
            "schema.json": json.dumps(SCHEMA),
            "assay.yaml": (
                "artifact: {kind: prompt, paths: [prompt.md]}\ncases: {files: [cases.yaml]}\n"
                "runner: {type: command, command: 'cat prompt.md'}\n"
                "checks:\n  - {type: json_schema, value: schema.json}\n"
            ),
        },
    )
    config = load_config(root / "assay.yaml")
    redactor = key_redactor(config, [Case(id="a", input="hi", checks=list(config.checks))], [])
    # `code` is one common word: structure, not a secret; `status` stands in the prompt; `ticket_ref` is a word.
    assert redactor.words == ["ticket_ref"]
    assert redactor.redact("exit code 3, status ok") == "exit code 3, status ok"
    assert redactor.redact('{"ticket_ref": "x"} ticket_refs') == f'{{"{REDACTED}": "x"}} ticket_refs'
    assert redactor.redact("escalated tier 3") == REDACTED


def test_promptfoo_python_and_javascript_check_files(tmp_path: Path) -> None:
    root = write(
        tmp_path / "pf",
        {
            "prompt.txt": "Answer: {{question}}\n",
            "grade.py": f"def get_assert(output, context):\n    return {PYTHON_FILE_CODE!r} in output\n",
            "grade.js": f"module.exports = (output, context) => output.includes('{JS_FILE_CODE}');\n",
            "promptfooconfig.yaml": (
                "prompts: [file://prompt.txt]\nproviders: [echo]\ntests:\n"
                + "".join(
                    f"  - vars: {{question: q{i}}}\n    assert:\n"
                    "      - {type: python, value: file://grade.py}\n"
                    "      - {type: javascript, value: file://grade.js}\n"
                    for i in range(3)
                )
            ),
            "assay.yaml": (
                "artifact: {kind: prompt, paths: [prompt.txt]}\ncases: {files: [promptfooconfig.yaml]}\n"
                "runner: {type: command, command: 'cat prompt.txt'}\n"
            ),
        },
    )
    redactor = redactor_of(root)
    for value in (PYTHON_FILE_CODE, JS_FILE_CODE):
        for form in echoes(value):
            assert leaked(redactor.redact(f"out: {form}."), [value]) == [], form
