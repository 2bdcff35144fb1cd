"""The completion-style starter for a local base model: examples from the dev split only, labels in turn."""

from __future__ import annotations

from pathlib import Path

from assay.cases.split import initial_split
from assay.config import SplitConfig, load_config
from assay.model import Case, CheckSpec, Split
from assay.starters import with_stop
from assay.starters.fewshot import MAX_EXAMPLES, fewshot_files, label_of, template_names

LABELS = ["alpha", "beta", "gamma", "delta"]


def cases(n: int = 40) -> list[Case]:
    return [
        Case(id=f"case-{i:02d}", input=f"message number {i}\nsecond line", expected=LABELS[i % 4])
        for i in range(n)
    ]


def test_examples_come_from_the_dev_split_only_one_label_at_a_time() -> None:
    given = cases()
    shots = fewshot_files("Classify the message.\n", given)
    splits = initial_split([c.id for c in given], SplitConfig())
    texts = {f"message number {c.id[-2:].lstrip('0') or '0'} second line": c for c in given}
    shown = [line.removeprefix("Input: ") for line in shots.prompt.splitlines() if line.startswith("Input: ")]
    assert shown[-1] == "{{input}}"
    examples = [texts[text] for text in shown[:-1]]
    assert len(examples) == shots.examples == MAX_EXAMPLES
    assert all(splits[c.id] == Split.DEV for c in examples)
    assert [c.expected for c in examples] == LABELS * 3  # each label once before any repeats
    pooled = [
        texts[line.removeprefix("Input: ")] for line in shots.pool.splitlines() if line.startswith("Input: ")
    ]
    assert pooled and all(splits[c.id] == Split.DEV for c in pooled)
    assert not {c.id for c in pooled} & {c.id for c in examples}
    assert len(pooled) == sum(splits[c.id] == Split.DEV for c in given) - len(examples)
    assert shots.prompt.startswith("Classify the message.\n\nInput: ") and shots.prompt.endswith("Label:\n")
    assert shots.needs_label_check and shots.labels == tuple(LABELS)


def test_labels_come_from_expected_or_an_equals_check_and_cases_with_checks_need_no_added_check() -> None:
    by_check = Case(id="a", input="x", checks=[CheckSpec(type="equals", value="  spam ")])
    negated = Case(id="b", input="x", checks=[CheckSpec(type="equals", value="spam", negate=True)])
    assert label_of(by_check) == "spam" and label_of(negated) is None
    assert label_of(Case(id="c", input="x", expected="two\nlines")) == "two lines"
    assert not fewshot_files("", [by_check]).needs_label_check


def test_no_labelled_case_gives_a_bare_query_and_long_inputs_are_cut() -> None:
    shots = fewshot_files("Do it.", [Case(id="a", input="hi", checks=[CheckSpec(type="regex", value=".")])])
    assert shots.examples == 0 and shots.prompt == "Do it.\n\nInput: {{input}}\nLabel:\n"
    long = [Case(id=f"l{i}", input="word " * 200, expected="x") for i in range(10)]
    assert all(len(line) < 320 for line in fewshot_files("", long).prompt.splitlines())


def test_file_names_and_the_newline_stop() -> None:
    assert template_names("prompts/triage.md") == ("prompts/triage.local.txt", "prompts/triage.pool.txt")
    assert with_stop("local:gemma3-270m") == "local:gemma3-270m?stop=%0A"
    assert with_stop("local:gemma3-270m?seed=3") == "local:gemma3-270m?seed=3&stop=%0A"
    assert with_stop("local:x?stop=%2E") == "local:x?stop=%2E"


def test_init_again_turns_the_chat_starter_with_a_local_model_into_the_completion_starter(
    tmp_path: Path,
) -> None:
    from assay.starters import local_upgrade, write_starter

    (tmp_path / "triage.md").write_text("Classify the message: alpha, beta, gamma or delta.\n")
    (tmp_path / "cases.yaml").write_text(
        "cases:\n"
        + "".join(f"  - {{id: m{i}, input: 'text {i}', expected: {LABELS[i % 4]}}}\n" for i in range(20))
    )
    assert write_starter(tmp_path).kind == "prompt"
    chat = (tmp_path / "assay.yaml").read_text()
    assert local_upgrade(tmp_path, "assay.yaml") is None  # no model set yet
    (tmp_path / "assay.yaml").write_text(chat.replace("  model:\n", "  model: gpt\n"))
    assert local_upgrade(tmp_path, "assay.yaml") is None  # not a local model
    edited = chat.replace("  model:\n", "  model: local:gemma3-270m\n").replace(
        "max_tokens: 512", "max_tokens: 4"
    )
    (tmp_path / "assay.yaml").write_text(edited)
    assert local_upgrade(tmp_path, "assay.yaml") is None  # the user changed more than the model: kept
    assert (tmp_path / "assay.yaml").read_text() == edited
    (tmp_path / "assay.yaml").write_text(chat.replace("  model:\n", '  model: "local:gemma3-270m"\n'))
    starter = local_upgrade(tmp_path, "assay.yaml")
    assert starter is not None and starter.written == ["triage.local.txt", "triage.pool.txt", "assay.yaml"]
    config = load_config(tmp_path / "assay.yaml")
    assert config.artifact.paths == ["triage.local.txt", "triage.pool.txt"]
    assert config.runner.model == "local:gemma3-270m?stop=%0A" and config.runner.mode == "template"
    assert (tmp_path / "triage.md").read_text() == "Classify the message: alpha, beta, gamma or delta.\n"
