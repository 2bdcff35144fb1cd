"""Few-shot operators: examples found by their labels, pool examples swapped or added, reorder, drop."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from assay.proposers.mutate import OPERATORS, mutate
from assay.proposers.mutate.fewshot import FewShot, has_examples, is_pool, pool_entries

PROMPT = """Label the review.

Review: Loved it.
Sentiment: positive

Review: Great value.
Sentiment: positive

Review: {{input}}
Sentiment:
"""
POOL = """# candidates

Review: It broke at once.
Sentiment: negative

Review: Great value.
Sentiment: positive

Review: Cold food, rude staff.
Sentiment: negative

Not an example at all.
"""
EXAMPLE_DIR = Path(__file__).resolve().parents[3] / "examples" / "sentiment-fewshot"


def examples(text: str) -> list[str]:
    return re.findall(r"Review: (?!\{\{)(.+)\nSentiment: (\w+)", text)


def run(name: str, files: dict[str, str], seed: int = 0):
    return OPERATORS.get(name).apply_files(files, "prompt.txt", files["prompt.txt"], random.Random(seed))  # type: ignore[attr-defined]


def test_pool_names_and_entries() -> None:
    assert [is_pool(p) for p in ("pool.txt", "a/examples.pool.md", "x-pool.txt", "spool.txt", "pool")] == [
        True, True, True, False, False,
    ]  # fmt: skip
    entries = pool_entries({"pool.txt": POOL, "prompt.txt": PROMPT})
    assert entries[0] == "Review: It broke at once.\nSentiment: negative" and len(entries) == 3


def test_the_query_and_the_instruction_are_not_examples() -> None:
    shot = FewShot.parse({"pool.txt": POOL}, "prompt.txt", PROMPT)
    assert [shot.chunks[i].split("\n")[0] for i in shot.examples] == [
        "Review: Loved it.",
        "Review: Great value.",
    ]
    # the pool example already in the prompt is not offered again
    assert [e.split("\n")[0] for e in shot.fresh] == [
        "Review: It broke at once.",
        "Review: Cold food, rude staff.",
    ]


def test_swap_replaces_one_example_with_a_new_pool_example() -> None:
    files = {"prompt.txt": PROMPT, "pool.txt": POOL}
    seen = set()
    for seed in range(20):
        mutation = run("fewshot.swap", files, seed)
        got = examples(mutation.new_text)
        assert len(got) == 2 and mutation.description.startswith("few-shot: replaced example")
        assert mutation.new_text.endswith("Review: {{input}}\nSentiment:\n")
        seen.update(review for review, _ in got)
    assert {"It broke at once.", "Cold food, rude staff."} <= seen


def test_add_inserts_a_pool_example_anywhere_and_drop_removes_one() -> None:
    files = {"prompt.txt": PROMPT, "pool.txt": POOL}
    slots = set()
    for seed in range(20):
        added = run("fewshot.add", files, seed)
        got = examples(added.new_text)
        assert len(got) == 3 and "\n\n\n" not in added.new_text
        slots.add(
            [r for r, _ in got].index(next(r for r, _ in got if r not in ("Loved it.", "Great value.")))
        )
        dropped = run("fewshot.drop", {"prompt.txt": added.new_text, "pool.txt": POOL}, seed)
        assert len(examples(dropped.new_text)) == 2 and dropped.new_text.startswith("Label the review.\n\n")
    assert slots == {0, 1, 2}


def test_reorder_and_drop_work_without_a_pool_but_swap_and_add_do_not() -> None:
    files = {"prompt.txt": PROMPT}
    reordered = run("fewshot.reorder", files)
    assert examples(reordered.new_text) == examples(PROMPT)[::-1]
    assert examples(run("fewshot.drop", files).new_text) in ([examples(PROMPT)[0]], [examples(PROMPT)[1]])
    assert run("fewshot.swap", files) is None and run("fewshot.add", files) is None
    # the plain (path, text, rng) form has no pool
    assert OPERATORS.get("fewshot.swap").apply("prompt.txt", PROMPT, random.Random(0)) is None
    assert (
        run(
            "fewshot.drop",
            {"prompt.txt": PROMPT.replace("Review: Great value.\nSentiment: positive\n\n", "")},
        )
        is None
    )


def test_the_engine_never_mutates_the_pool_and_routes_few_shot_operators() -> None:
    files = {"prompt.txt": PROMPT, "pool.txt": POOL}
    operators = set()
    for layer in (1, 2):
        for seed in range(40):
            mutation = mutate(files, layer=layer, rng=random.Random(seed))
            assert mutation is not None and mutation.path == "prompt.txt"
            operators.add(mutation.operator)
    assert {"fewshot.swap", "fewshot.reorder", "fewshot.add", "fewshot.drop"} <= operators
    assert not has_examples(files, "pool.txt")


def test_a_prompt_without_examples_gets_the_same_mutations_as_before() -> None:
    plain = {"prompt.md": "# Task\n\nAnswer briefly. Never guess.\n\nCite the source.\n"}
    for seed in range(10):
        mutation = mutate(plain, layer=1, rng=random.Random(seed))
        assert mutation is not None and mutation.operator.startswith("text.")


@pytest.mark.skipif(not EXAMPLE_DIR.is_dir(), reason="example not present")
def test_the_shipped_example_has_a_pool_the_operators_can_use() -> None:
    files = {name: (EXAMPLE_DIR / name).read_text(encoding="utf-8") for name in ("prompt.txt", "pool.txt")}
    shot = FewShot.parse(files, "prompt.txt", files["prompt.txt"])
    assert len(shot.examples) == 3 and len(shot.fresh) == 10
    cases = (EXAMPLE_DIR / "cases.yaml").read_text(encoding="utf-8")
    assert not any(entry.split("\n")[0].removeprefix("Review: ") in cases for entry in shot.fresh)


def test_code_modules_named_pool_are_not_pools() -> None:
    from assay.proposers.mutate.fewshot import is_pool

    assert is_pool("pool.txt") and is_pool("prompts/sentiment-pool.md") and is_pool("x.pool.txt")
    assert not is_pool("pool.py") and not is_pool("thread_pool.py") and not is_pool("spool.txt")
