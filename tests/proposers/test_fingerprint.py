"""A candidate's fingerprint and content size ignore what a reader ignores: comments, formatting, key order."""

from __future__ import annotations

import pytest

from assay.proposers.fingerprint import content_size, fingerprint

PAIRS = [
    ("a.py", "x = 1  # one\n\n\ny = [1,2]\n", "x=1\ny = [ 1, 2 ]   # the list\n"),
    ("a.yaml", "# top\na: 1   # one\nb: [x, y]\n", "b:\n  - x\n  - y\na: 1\n"),
    ("a.json", '{"a": 1,\n "b": [1, 2]}\n', '{ "b":[1,2], "a":1 }'),
    ("a.toml", "# top\na = 1  # one\n[t]\nb = 2\n", "a=1\n\n[t]\nb=2\n"),
    ("a.md", "Say hi.  <!-- a note -->\n\n\nTwice.\n", "Say hi.\nTwice."),
]


@pytest.mark.parametrize(("path", "commented", "plain"), PAIRS, ids=[p[0] for p in PAIRS])
def test_comments_and_formatting_change_neither(path: str, commented: str, plain: str) -> None:
    assert content_size(path, commented) == content_size(path, plain)
    if not path.endswith(".md"):  # text is fingerprinted by its lines
        assert fingerprint({path: commented}) == fingerprint({path: plain})


def test_content_changes_the_size() -> None:
    assert content_size("a.py", "x = 1\ny = 2\n") > content_size("a.py", "x = 1\n")
    assert content_size("a.yaml", "a: 1\nb: 2\n") > content_size("a.yaml", "a: 1\n")
    assert content_size("broken.json", '{"a": 1,') == len('{"a": 1,')  # words, when it does not parse
