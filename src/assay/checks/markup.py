"""Markup and code in an output: ``is_xml``, ``contains_xml``, ``is_html``, ``contains_html``, ``is_sql``,
``contains_sql``.

- ``is_xml``: the whole output (after leading whitespace) is well-formed XML; ``value`` may list required
  elements as dotted paths from the root (``order.items.item``), as a list or comma-separated.
  ``contains_xml``: some fragment of the output is.
- ``is_html``: the output (trimmed) is an HTML document or fragment: it starts with ``<``, ends with ``>``
  and has at least one HTML element; ``contains_html``: the output shows at least two signs of HTML
  (see :func:`html_signs`; a heuristic, as promptfoo's is).
- ``is_sql``: every statement of the output parses with SQLite's parser (an unknown table or column is not a
  syntax error); ``contains_sql``: the body of a ```sql block, else the whole output, does. promptfoo parses
  with node-sql-parser (MySQL by default), so dialect-specific syntax can differ; its ``allowedTables`` and
  ``allowedColumns`` are not checked.
"""

from __future__ import annotations

import re
import sqlite3
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import ClassVar

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.checks.text import clip
from assay.model import CheckResult, CheckSpec, Output

_XML_FRAGMENT = re.compile(r"<\?xml.*?>[\s\S]*</[^>]+>|<([A-Za-z_][\w.-]*)[^>]*>[\s\S]*?</\1\s*>")
_SQL_BLOCK = re.compile(r"```sql\s*\n([\s\S]*?)```", re.IGNORECASE)
HTML_TAGS = frozenset(
    [
        "a",
        "abbr",
        "address",
        "article",
        "aside",
        "audio",
        "b",
        "blockquote",
        "body",
        "br",
        "button",
        "canvas",
        "caption",
        "code",
        "col",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "fieldset",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "i",
        "iframe",
        "img",
        "input",
        "label",
        "li",
        "link",
        "main",
        "meta",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "script",
        "section",
        "select",
        "small",
        "source",
        "span",
        "strong",
        "style",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "u",
        "ul",
        "video",
    ]
)


def _required(spec: CheckSpec) -> list[str]:
    value = spec.value
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, dict) and isinstance(value.get("requiredElements"), list):
        value = value["requiredElements"]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise CheckSpecError(f"{spec.type}: value must list required elements (a list or comma-separated text)")


def _xml_problem(text: str, required: list[str]) -> str | None:
    if not text.startswith("<"):
        return "XML must start with a tag"
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        return f"XML does not parse: {exc}"
    for path in required:
        head, *rest = path.split(".")
        node: ET.Element | None = root if head == root.tag else None
        for part in rest:
            node = node.find(part) if node is not None else None
        if node is None:
            return f"missing element {path!r}"
    return None


class _XmlCheck(Check):
    whole: ClassVar[bool] = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.required = _required(spec)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        text = output.text.strip()
        if self.whole:
            problem = _xml_problem(text, self.required)
            return self.result(problem is None, evidence=problem or "well-formed XML")
        fragments = [m.group(0) for m in _XML_FRAGMENT.finditer(text)]
        if not fragments:
            return self.result(False, evidence="no XML found in the output")
        problems = [_xml_problem(f, self.required) for f in fragments]
        if any(p is None for p in problems):
            return self.result(True, evidence="the output holds well-formed XML")
        return self.result(False, evidence=clip(f"no fragment is valid XML: {problems[0]}"))


@CHECKS.register("is_xml")
class IsXmlCheck(_XmlCheck):
    """The output is well-formed XML (with the required elements in ``value``, if any)."""

    name = "is_xml"


@CHECKS.register("contains_xml")
class ContainsXmlCheck(_XmlCheck):
    """Some fragment of the output is well-formed XML (with the required elements in ``value``, if any)."""

    name = "contains_xml"
    whole = False


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


_OPEN_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(\s[^<>]*)?/?>")
_CLOSE_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,6}|#x[0-9A-Fa-f]{1,6});")
_ATTRIBUTE = re.compile(r"""\s[A-Za-z-]+\s*=\s*(?:"[^"]*"|'[^']*')""")


def html_signs(text: str) -> int:
    """How many kinds of HTML sign the text shows: an element HTML knows, a closing tag, a doctype, a
    comment, an entity, a quoted attribute inside a tag (an element HTML knows counts twice)."""
    opening = [m for m in _OPEN_TAG.finditer(text)]
    signs = 2 if any(m.group(1).lower() in HTML_TAGS for m in opening) else int(bool(opening))
    signs += bool(_CLOSE_TAG.search(text))
    signs += 2 * bool(re.search(r"<!doctype\s+html", text, re.IGNORECASE))
    signs += "<!--" in text and "-->" in text
    signs += bool(_ENTITY.search(text))
    signs += any(m.group(2) and _ATTRIBUTE.search(m.group(2)) for m in opening)
    return signs


@CHECKS.register("contains_html")
class ContainsHtmlCheck(Check):
    """The output contains HTML (at least two signs of it, see :func:`html_signs`)."""

    name = "contains_html"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        signs = html_signs(output.text)
        return self.result(signs >= 2, evidence=f"{signs} signs of HTML (2 needed)")


@CHECKS.register("is_html")
class IsHtmlCheck(Check):
    """The trimmed output is HTML: it starts with ``<``, ends with ``>`` and holds an HTML element."""

    name = "is_html"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        text = output.text.strip()
        if not (text.startswith("<") and text.endswith(">")):
            return self.result(False, evidence="HTML must start with '<' and end with '>'")
        parser = _Elements()
        parser.feed(text)
        parser.close()
        known = [tag for tag in parser.tags if tag in HTML_TAGS]
        if not known:
            return self.result(False, evidence="no HTML element found")
        return self.result(True, evidence=f"HTML with {len(parser.tags)} elements")


def sql_problem(text: str) -> str | None:
    """Why ``text`` is not valid SQL (SQLite's parser), or None."""
    statements = [s for s in _split_sql(text) if s.strip()]
    if not statements:
        return "no SQL statement"
    connection = sqlite3.connect(":memory:")
    try:
        for statement in statements:
            try:
                connection.execute(f"EXPLAIN {statement}")
            except sqlite3.Error as exc:
                message = str(exc)
                if (
                    "syntax error" in message
                    or "incomplete input" in message
                    or "unrecognized token" in message
                ):
                    return f"not valid SQL: {message}"
    finally:
        connection.close()
    return None


def _split_sql(text: str) -> list[str]:
    parts, current = [], ""
    for line in text.replace("\r", "").split(";"):
        current += line
        if sqlite3.complete_statement(current + ";"):
            parts.append(current)
            current = ""
        else:
            current += ";"
    if current.strip(" \n\t;"):
        parts.append(current)
    return parts


class _SqlCheck(Check):
    extract: ClassVar[bool] = False

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        text = output.text
        if self.extract:
            block = _SQL_BLOCK.search(text)
            text = block.group(1) if block else text
        problem = sql_problem(text.strip())
        return self.result(problem is None, evidence=clip(problem or "valid SQL"))


@CHECKS.register("is_sql")
class IsSqlCheck(_SqlCheck):
    """The output is valid SQL (see the module docstring)."""

    name = "is_sql"


@CHECKS.register("contains_sql")
class ContainsSqlCheck(_SqlCheck):
    """The output's ```sql block (or the whole output) is valid SQL."""

    name = "contains_sql"
    extract = True
