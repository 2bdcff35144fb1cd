"""Splitting documents into blocks and paragraphs into phrases and sentences, losslessly."""

from __future__ import annotations

from assay.proposers.mutate.text_split import phrases, sentences, split_blocks

DOC = """---
name: reviewer
description: Reviews code. Carefully, politely.
---
# Reviewer

You are a careful reviewer. Read the diff, then the tests.
Always cite the line you mean.

- Use `a, b. c` lists.
- Cite [sources, always](http://x.y/a, b).

```python
x = 1, 2. Not prose.
```

| a, b | c. d |
"""


def test_blocks_join_back_to_the_document_and_freeze_non_prose() -> None:
    blocks = split_blocks(DOC)
    assert "".join(b.text for b in blocks) == DOC
    kinds = [b.kind for b in blocks]
    assert kinds == [
        "frontmatter",
        "heading",
        "blank",
        "para",
        "blank",
        "para",
        "blank",
        "fence",
        "blank",
        "raw",
    ]
    assert blocks[0].text.endswith("---\n") and "Carefully" in blocks[0].text
    assert blocks[1].level == 1


def test_phrases_split_at_punctuation_but_not_inside_code_or_links() -> None:
    prose = phrases(
        "You are a careful reviewer. Read the diff, then the tests.\nAlways cite the line you mean.\n"
    )
    assert prose.units == [
        "You are a careful reviewer.",
        "Read the diff,",
        "then the tests.",
        "Always cite the line you mean.",
    ]
    assert prose.ends == ["sentence", "phrase", "sentence", "end"]
    items = phrases("- Use `a, b. c` lists.\n- Cite [sources, always](http://x.y/a, b).\n")
    assert items.prefix == "- "
    assert items.units == ["Use `a, b. c` lists.", "Cite [sources, always](http://x.y/a, b)."]
    assert items.ends == ["item", "end"]


def test_sentences_merge_phrases_and_render_back() -> None:
    text = "One, two. Three; four!\nFive\n"
    split = sentences(text)
    assert split.units == ["One, two.", "Three; four!", "Five"]
    assert split.render() == text == phrases(text).render()


def test_unit_delete_keeps_the_stronger_separator() -> None:
    items = phrases("- a\n- b, c\n- d\n")
    items.delete(items.units.index("c"))
    assert items.render() == "- a\n- b,\n- d\n"
    items.delete(len(items.units) - 1)
    assert items.render() == "- a\n- b,\n"


def test_frontmatter_without_a_closing_line_is_ordinary_text() -> None:
    assert [b.kind for b in split_blocks("---\nnot closed\n")] == ["raw", "para"]
