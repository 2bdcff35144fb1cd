"""The completion-style starter for a local base model: examples from the dev split only, labels in turn."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.cases.split import initial_split
from assay.config import SplitConfig, load_config
from assay.model import Case, CheckSpec, Split
from assay.starters import with_stop
from assay.starters.fewshot import EXAMPLES_PER_LABEL, MAX_EXAMPLES, fewshot_files, label_of, template_names
from tests.cli.conftest import assay
from tests.fakes.llm_server import ScriptedLLMServer

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


SENTIMENT = Path(__file__).parents[2] / "examples" / "sentiment-fewshot" / "cases.yaml"
INSTRUCTION = "Label the review as positive or negative.\n"


def labelled(root: Path, how: str) -> Path:
    """A prompt and the example's 48 reviews, each labelled ``how``: ``expected``, or by one check of that
    type (``icontains: positive``, as promptfoo users write a label)."""
    root.mkdir()
    (root / "classify.md").write_text(INSTRUCTION)
    cases = yaml.safe_load(SENTIMENT.read_text())["cases"]
    written = [
        {"id": c["id"], "input": c["input"], "expected": c["expected"]}
        if how == "expected"
        else {"id": c["id"], "input": c["input"], "checks": [{"type": how, "value": c["expected"]}]}
        for c in cases
    ]
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": written}, sort_keys=False))
    return root


@pytest.mark.parametrize("how", ["icontains", "contains", "equals", "starts_with"])
def test_a_label_written_as_one_check_gives_the_same_examples_as_expected(tmp_path: Path, how: str) -> None:
    # The run: cases labelled with icontains took 0 examples ("no dev case has a label").
    model = "local:gemma3-270m"
    by_expected, by_check = labelled(tmp_path / "expected", "expected"), labelled(tmp_path / how, how)
    first = assay("init", "--model", model, cwd=by_expected)
    second = assay("init", "--model", model, cwd=by_check)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "no dev case" not in second.stdout
    for name in ("classify.local.txt", "classify.pool.txt"):  # the examples and the pool, byte for byte
        assert (by_check / name).read_bytes() == (by_expected / name).read_bytes(), name
    assert (by_check / "classify.local.txt").read_text().count("\nLabel: ") == 2 * EXAMPLES_PER_LABEL
    # The one difference: cases without checks get the label check in assay.yaml; these have their own.
    assert "checks:" in (by_expected / "assay.yaml").read_text()
    assert "checks:" not in (by_check / "assay.yaml").read_text()


def test_only_one_short_positive_check_is_a_label() -> None:
    def one(check: CheckSpec) -> str | None:
        return label_of(Case(id="a", input="x", checks=[check]))

    assert one(CheckSpec(type="icontains", value=" Positive ")) == "Positive"
    assert one(CheckSpec(type="starts_with", value="spam")) == "spam"
    assert one(CheckSpec(type="icontains", value="spam", negate=True)) is None
    assert (
        one(CheckSpec(type="icontains", value="a sentence far too long to be the label of anything at all"))
        is None
    )
    assert one(CheckSpec(type="contains", value="two\nlines")) is None
    assert one(CheckSpec(type="contains_any", value=["a", "b"])) is None
    assert one(CheckSpec(type="regex", value="^spam$")) is None
    two = Case(
        id="a",
        input="x",
        checks=[CheckSpec(type="icontains", value="spam"), CheckSpec(type="regex", value=".")],
    )
    assert label_of(two) is None  # which of two checks would be the label is a guess


def _answer_positive_first_word(body: dict[str, Any]) -> str:
    """A stand-in for the base model at temperature 0: the same prompt, the same answer (positive for a
    review whose first word has an even length, else negative), a label as the few-shot form asks."""
    text = json.dumps(body)
    query = text.rsplit("Input: ", 1)[1].split()[0]
    return "positive" if len(query) % 2 == 0 else "negative"


@pytest.mark.usefixtures("no_bwrap")
def test_the_same_answers_give_the_same_eval_result_either_way(tmp_path: Path) -> None:
    results = []
    with ScriptedLLMServer(default=_answer_positive_first_word) as server:
        for how in ("expected", "icontains"):
            root = labelled(tmp_path / how, how)
            assert assay("init", "--model", "local:gemma3-270m", cwd=root).returncode == 0
            config = root / "assay.yaml"  # the model the starter wrote, answered by the stand-in instead
            text = config.read_text()
            model = re.search(r'model: "(local:[^"]+)"', text)
            assert model is not None
            config.write_text(
                text.replace(model.group(0), f'model: "openai:stand-in"\n  base_url: "{server.openai_url}"')
            )
            done = assay("eval", "--json", "-q", cwd=root, env={"OPENAI_API_KEY": "k"})
            assert done.returncode in (0, 1), done.stderr
            summary = json.loads(done.stdout)
            results.append((summary["passed"], summary["total"], summary["mean_score"]))
    assert results[0] == results[1]
    assert 0 < results[0][0] < results[0][1]  # the stand-in gets some right and some wrong


@pytest.mark.local_model
@pytest.mark.usefixtures("no_bwrap")
def test_with_the_local_model_the_eval_result_is_the_same_either_way(tmp_path: Path) -> None:
    results = []
    for how in ("expected", "icontains"):
        root = labelled(tmp_path / how, how)
        assert assay("init", "--model", "local:gemma3-270m", cwd=root).returncode == 0
        done = assay("eval", "--json", "-q", cwd=root)
        assert done.returncode in (0, 1), done.stderr
        summary = json.loads(done.stdout)
        results.append((summary["passed"], summary["total"], summary["mean_score"]))
    assert results[0] == results[1] and results[0][0] > 0
