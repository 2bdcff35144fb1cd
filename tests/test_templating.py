"""Nunjucks-style rendering (promptfoo's ``{{ }}``) by Jinja2, where the two would differ."""

from __future__ import annotations

from typing import Any

import pytest

from assay.templating import TemplateError, has_template, render

VARS: dict[str, Any] = {
    "name": "Ada",
    "phrase": "hello world",
    "flag": True,
    "nothing": None,
    "ratio": 2.0,
    "items": ["a", "b"],
    "data": {"k": 1},
    "raw": '{"x": [1, 2]}',
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Hi {{ name }}", "Hi Ada"),
        ("{{ missing }}|{{ missing.deeper if missing else '' }}", "|"),  # undefined prints nothing
        ("{{ flag }} {{ nothing }} {{ ratio }}", "true  2"),  # as JavaScript prints them
        ("{{ items }}", "a,b"),
        ("{{ data }}", "[object Object]"),
        ("{{ data | dump }}", '{"k":1}'),
        ("{{ data | dump(2) }}", '{\n  "k": 1\n}'),
        ("{{ (raw | load).x[1] }}", "2"),
        ("{{ phrase | truncate(9) }}", "hello..."),  # Jinja2 would keep it whole (leeway 5)
        ("{{ phrase | truncate(20) }}", "hello world"),
        ("{{ phrase | truncate(4, true, '~') }}", "hell~"),
        ("{{ 2.5 | round }} {{ 3.5 | round }}", "3 4"),  # Math.round, not round-half-even
        ("{{ 2.1 | round(0, 'floor') }}", "2"),
        ("{{ ratio | string }}", "2"),
        ("{% if flag %}yes{% elseif name %}name{% else %}no{% endif %}", "yes"),
        ("{% for i in items %}{{ loop.index }}{{ i }}{% endfor %}", "1a2b"),
        ("line\n", "line\n"),  # a trailing newline is kept
        ("a\nb", "a\nb"),
        ("{{ 'x' | nl2br }}", "x"),
    ],
)
def test_renders_as_nunjucks(template: str, expected: str) -> None:
    assert render(template, VARS) == expected


def test_env_is_the_configs_env() -> None:
    assert render("{{ env.REGION }}-{{ name }}", VARS, env={"REGION": "eu"}) == "eu-Ada"


def test_text_without_template_syntax_is_returned_as_is() -> None:
    text = "100% {not a template}"
    assert not has_template(text) and render(text, VARS) is text


def test_templates_are_sandboxed_and_bad_syntax_raises() -> None:
    with pytest.raises(TemplateError):
        render("{{ name.__class__.__mro__ }}", VARS)
    with pytest.raises(TemplateError):
        render("{% if %}", VARS)
