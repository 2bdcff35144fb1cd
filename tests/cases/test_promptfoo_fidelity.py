"""promptfoo suites read as promptfoo reads them: templated values, list vars, nested file:// paths, binary
files, test files of every kind, generators, YAML 1.2 and the refusals that must be clear."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from assay.cases.loader import load_case_files, read_case_file
from assay.errors import ConfigError
from assay.model import Case
from tests.cases._helpers import one_line, write

# The first bytes of a real 1x1 PNG and of a RIFF/WAVE header: content the loader must not read as UTF-8.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80>\x00\x00\x00}\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00\xff\xfe"


def _load(config: Path) -> dict[str, Case]:
    return {case.id: case for case in load_case_files([config]).cases}


def _pairs(case: Case) -> list[tuple[str, object]]:
    return [(c.type, c.value) for c in case.checks]


def test_vars_render_into_values_and_rubrics(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['Answer {{customer}} about {{topic}}']
providers: [openai:gpt-4o-mini]
defaultTest:
  vars: {brand: Northwind}
  assert:
    - type: icontains
      value: '{{ brand }}'
tests:
  - description: Greets by name
    vars: {customer: Ada Lovelace, topic: invoices, items: [a, b]}
    assert:
      - type: contains
        value: 'Dear {{ customer.split(" ")[0] if false else customer }}'
      - type: llm-rubric
        value: 'Mentions {{ topic | upper }} and signs off as {{brand}} support'
      - type: contains-any
        value: ['{{ topic }}', 'bills']
      - type: equals
        value: '{{ missing }}done'
""",
    )
    case = _load(config)
    # `items` is a list var: it expands, so the one test gives two cases
    first = case["greets-by-name-1"]
    assert _pairs(first) == [
        ("icontains", "Northwind"),
        ("contains", "Dear Ada Lovelace"),
        ("llm_judge", "Mentions INVOICES and signs off as Northwind support"),
        ("contains_any", ["invoices", "bills"]),
        ("equals", "done"),  # an undefined var renders empty, as in Nunjucks
    ]
    assert first.vars["items"] == "a" and case["greets-by-name-2"].vars["items"] == "b"


def test_list_vars_expand_to_every_combination(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['{{language}}: {{question}}']
tests:
  - description: Translations
    vars:
      language: [French, German]
      question: [Hello, Goodbye, Thanks]
      tone: polite
    assert:
      - type: contains
        value: '{{question}}'
  - description: Kept whole
    options: {disableVarExpansion: true}
    vars: {words: [one, two]}
    assert:
      - type: javascript
        value: context.vars.words.length === 2
""",
    )
    cases = _load(config)
    expanded = [c for c in cases.values() if c.id.startswith("translations-")]
    assert [(c.vars["language"], c.vars["question"]) for c in expanded] == [
        ("French", "Hello"),
        ("French", "Goodbye"),
        ("French", "Thanks"),
        ("German", "Hello"),
        ("German", "Goodbye"),
        ("German", "Thanks"),
    ]
    assert [c.checks[0].value for c in expanded][:3] == ["Hello", "Goodbye", "Thanks"]
    assert all(c.vars["tone"] == "polite" for c in expanded)
    assert cases["kept-whole"].vars["words"] == ["one", "two"]


def test_file_paths_resolve_as_promptfoo_resolves_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # promptfoo resolves var and assertion files against the config's folder, also inside a tests file in a
    # subfolder; a test's whole `vars: file://...` is relative to the file that names it. Nothing is relative
    # to the working directory.
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "context.txt", "working-directory context\n")
    write(tmp_path / "suite" / "context.txt", "config-folder context\n")
    write(tmp_path / "suite" / "schema.json", '{"type": "object", "required": ["id"]}')
    write(tmp_path / "suite" / "cases" / "vars.yaml", "region: EU\n")
    write(
        tmp_path / "suite" / "cases" / "billing.yaml",
        """\
- description: Nested tests file
  vars: {context: file://context.txt}
  assert:
    - type: is-json
      value: file://schema.json
- description: Vars from a file beside the tests
  vars: file://vars.yaml
  assert: [{type: contains, value: '{{region}}'}]
""",
    )
    config = write(
        tmp_path / "suite" / "promptfooconfig.yaml",
        """\
prompts: ['{{context}}']
tests:
  - file://cases/billing.yaml
  - description: Inline test
    vars: {context: file://context.txt}
    assert: [{type: contains, value: context}]
""",
    )
    cases = _load(Path("suite/promptfooconfig.yaml"))
    assert cases["nested-tests-file"].vars["context"] == "config-folder context"
    assert cases["nested-tests-file"].checks[0].value == {"type": "object", "required": ["id"]}
    assert cases["inline-test"].vars["context"] == "config-folder context"
    assert cases["vars-from-a-file-beside-the-tests"].vars == {"region": "EU"}
    assert cases["vars-from-a-file-beside-the-tests"].checks[0].value == "EU"
    assert config.is_file()


def test_binary_var_files_are_passed_as_promptfoo_passes_them(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "call.wav").write_bytes(WAV)
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['Describe {{image}}']
tests:
  - description: Image and audio
    vars: {image: file://chart.png, audio: file://call.wav}
    assert: [{type: icontains, value: chart}]
""",
    )
    case = _load(config)["image-and-audio"]
    assert case.vars["image"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert case.vars["audio"] == base64.b64encode(WAV).decode()


def test_yaml_1_2_keeps_yes_no_on_as_strings(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['{{q}}']
tests:
  - description: Yes stays a word
    vars: {q: on, flag: true}
    assert:
      - type: equals
        value: Yes
      - type: not-equals
        value: No
""",
    )
    case = _load(config)["yes-stays-a-word"]
    assert _pairs(case) == [("equals", "Yes"), ("equals", "No")]
    assert case.vars == {"q": "on", "flag": True}


def test_tests_from_globs_of_every_file_kind(tmp_path: Path) -> None:
    write(
        tmp_path / "tests" / "a_smoke.csv",
        "question,__expected,__description\nWhat is 2+2?,contains: 4,CSV sum\nName a colour,,CSV open\n",
    )
    write(
        tmp_path / "tests" / "b_more.json",
        json.dumps(
            [
                {
                    "description": "JSON case",
                    "vars": {"question": "Hi"},
                    "assert": [{"type": "contains", "value": "Hi"}],
                }
            ]
        ),
    )
    write(
        tmp_path / "tests" / "c_lines.jsonl",
        '{"description": "JSONL case", "vars": {"question": "Bye"}, "assert": [{"type": "icontains", "value": "bye"}]}\n',
    )
    write(
        tmp_path / "tests" / "d_one.yaml",
        "description: Single YAML test\nvars: {question: Why}\nassert: [{type: regex, value: '(?<word>because)'}]\n",
    )
    config = write(tmp_path / "promptfooconfig.yaml", "prompts: ['{{question}}']\ntests: file://tests/*\n")
    load = load_case_files([config])
    by_id = {c.id: c for c in load.cases}
    assert list(by_id) == ["csv-sum", "csv-open", "json-case", "jsonl-case", "single-yaml-test"]
    assert _pairs(by_id["csv-sum"]) == [("contains", "4")]
    assert _pairs(by_id["single-yaml-test"]) == [("regex", "(?P<word>because)")]
    # the CSV row without an assertion is unjudged, and named
    assert [c.id for c in load.unjudged] == ["csv-open"]
    assert any("csv-open" in w and "unjudged" in w for w in load.warnings)


def test_var_globs_expand_to_one_case_per_file(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.md", "Alpha doc\n")
    write(tmp_path / "docs" / "b.md", "Beta doc\n")
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: ['{{doc}}']\ntests:\n  - description: Docs\n    vars: {doc: file://docs/*.md}\n"
        "    assert: [{type: contains, value: doc}]\n",
    )
    assert [c.vars["doc"] for c in _load(config).values()] == ["Alpha doc", "Beta doc"]


def test_python_generators_with_config(tmp_path: Path) -> None:
    write(
        tmp_path / "gen.py",
        """\
def generate_tests(config=None):
    n = (config or {}).get("count", 2)
    return [
        {"description": f"Generated {i}", "vars": {"n": str(i)}, "assert": [{"type": "contains", "value": str(i)}]}
        for i in range(n)
    ]

def few():
    return [{"vars": {"n": "x"}, "assert": [{"type": "equals", "value": "x"}]}]
""",
    )
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['{{n}}']
tests:
  - path: file://gen.py:generate_tests
    config: {count: 3}
  - file://gen.py:few
""",
    )
    cases = _load(config)
    assert [c.vars["n"] for c in cases.values()] == ["0", "1", "2", "x"]
    assert _pairs(cases["generated-2"]) == [("contains", "2")]


def test_javascript_generators_and_transform_vars_run_in_node(tmp_path: Path) -> None:
    write(
        tmp_path / "gen.js",
        "module.exports = async () => [{description: 'From JS', vars: {city: 'oslo'},"
        " assert: [{type: 'icontains', value: '{{city}}'}]}];\n",
    )
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['{{city}}']
defaultTest:
  options:
    transformVars: '({...vars, city: vars.city.toUpperCase(), seen: context.uuid.length > 0})'
tests: file://gen.js
""",
    )
    case = _load(config)["from-js"]
    assert case.vars == {"city": "OSLO", "seen": True}
    assert _pairs(case) == [("icontains", "OSLO")]  # rendered with the transformed vars


@pytest.mark.parametrize(
    ("tests", "files", "parts"),
    [
        (
            "file://cases.ts",
            {"cases.ts": "export default []"},
            ["cases.ts", "TypeScript", "no TypeScript runner"],
        ),
        (
            "huggingface://datasets/acme/qa",
            {},
            ["huggingface://datasets/acme/qa", "save the rows as a CSV or JSONL"],
        ),
        ("file://missing/*.yaml", {}, ["no file matches", "missing/*.yaml"]),
        ("file://rows.xlsx", {"rows.xlsx": "PK"}, ["rows.xlsx", "save the sheet as CSV"]),
    ],
)
def test_unreadable_test_sources_are_one_line_errors(
    tmp_path: Path, tests: str, files: dict[str, str], parts: list[str]
) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    config = write(tmp_path / "promptfooconfig.yaml", f"prompts: ['x']\ntests: {tests}\n")
    with pytest.raises(ConfigError) as excinfo:
        read_case_file(config)
    one_line(excinfo, str(config), "tests", *parts)


def test_unknown_assertion_type_names_the_field(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: ['x']\ntests:\n  - vars: {a: b}\n    assert:\n      - type: containz\n        value: x\n",
    )
    with pytest.raises(ConfigError) as excinfo:
        read_case_file(config)
    one_line(excinfo, str(config), "tests[0].assert[0].type", "containz")


def test_similar_loads_without_the_embed_extra(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: ['x']\ntests:\n  - description: Near\n    vars: {a: b}\n    assert:\n"
        "      - type: similar\n        value: The parcel ships today\n        threshold: 0.8\n",
    )
    case = _load(config)["near"]
    assert (case.checks[0].type, case.checks[0].threshold) == ("similar", 0.8)


def test_dropped_fields_are_warned_about(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ['x']
tests:
  - description: Graded elsewhere
    vars: {a: b}
    options: {provider: openai:gpt-4o, prefix: 'Be brief. '}
    assert:
      - type: llm-rubric
        value: Is brief
        metric: brevity
        provider: anthropic:claude-3-haiku
      - type: moderation
""",
    )
    loaded = read_case_file(config)
    text = "\n".join(loaded.warnings)
    for part in (
        "options.provider",
        "the grading provider is not used",
        "prompt prefixes are not applied",
        "metric names are not kept",
        "(and 1 more like it)",  # the assertion's own provider, same message
        "moderation needs a provider's moderation API",
    ):
        assert part in text, part
    case = loaded.cases[0][0]
    assert [c.type for c in case.checks] == ["llm_judge", "unsupported"]


def test_a_non_promptfoo_file_with_tests_is_read_as_skill_creator(tmp_path: Path) -> None:
    path = write(
        tmp_path / "evals.json",
        json.dumps(
            {
                "skill_name": "changelog",
                "tests": [{"name": "bump", "input": "Write the changelog", "must_have": ["## 1.2.0"]}],
            }
        ),
    )
    loaded = read_case_file(path)
    assert loaded.format == "skill-creator"
    assert [(c.id, [(s.type, s.value) for s in c.checks]) for c, _ in loaded.cases] == [
        ("bump", [("contains", "## 1.2.0")])
    ]


def test_a_reference_that_renders_empty_fails_its_check_not_the_file(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: ['Poem about {{subject}}']\ndefaultTest:\n  assert:\n    - {type: similar, value: '{{prompt}}'}\n"
        "tests:\n  - description: Space\n    vars: {subject: space}\n",
    )
    loaded = read_case_file(config)
    (case, _) = loaded.cases[0]
    assert [(c.type, c.value) for c in case.checks] == [
        (
            "unsupported",
            "similar: its value '{{prompt}}' renders empty for this test (a var it names is not set)",
        )
    ]
    assert any("defaultTest.assert[0].value" in w and "renders empty" in w for w in loaded.warnings)
