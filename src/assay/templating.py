"""Nunjucks-style templates (promptfoo's ``{{ var }}``, filters, ``{% if %}``, ``{% for %}``) rendered by Jinja2.

Jinja2 covers the subset promptfoo configs use. Rendering is sandboxed (a template is data: it may come
from a candidate's prompt) and follows Nunjucks where the two differ:

- an undefined variable renders as the empty string (Nunjucks' default), not an error;
- values print as JavaScript would: ``true``/``false``, ``null`` as nothing, ``2.0`` as ``2``, a list as
  its items joined by commas, a mapping as ``[object Object]`` (use ``| dump``);
- filters ``dump`` (JSON, with an optional indent) and ``load`` (parse JSON), as promptfoo adds, and
  ``nl2br``; ``{% elseif %}`` is read as ``{% elif %}``; a trailing newline is kept;
- ``truncate`` cuts at the last space within the length, with no leeway; ``round`` rounds halves up
  (``Math.round``); ``string`` prints as JavaScript does.

Not available: JavaScript expressions and methods (``name.toUpperCase()``, ``items.length``: use the
filters ``upper`` and ``length``), custom ``nunjucksFilters`` (JavaScript files), and Nunjucks-only tags
such as ``{% asyncEach %}``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import TemplateError
    from jinja2.sandbox import SandboxedEnvironment

__all__ = ["TemplateError", "has_template", "render"]

_ELSEIF = re.compile(r"\{%(-?)\s*elseif\b")
_MARKERS = ("{{", "{%", "{#")


def __getattr__(name: str) -> Any:
    # Jinja2 is imported when a template is first rendered (or its error caught): loading case files that
    # hold none, as most do, does not pay for it.
    if name == "TemplateError":
        from jinja2 import TemplateError

        return TemplateError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _js_text(value: Any) -> Any:
    """What ``String(value)`` gives in JavaScript, for the values JSON can hold."""
    from jinja2 import Undefined

    if isinstance(value, Undefined) or value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list | tuple):
        return ",".join(str(_js_text(item)) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return value


def _dump(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify``: compact unless an indent is given."""
    separators = (",", ":") if indent is None else None
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators, default=str)


def _load(text: Any) -> Any:
    return json.loads(str(text))


def _nl2br(text: Any) -> str:
    return str(_js_text(text)).replace("\r\n", "<br />\n").replace("\n", "<br />\n")


def _truncate(text: Any, length: int = 255, killwords: bool = False, end: str | None = None) -> str:
    """Nunjucks' ``truncate``: cut at the last space before ``length`` (no leeway, unlike Jinja2's)."""
    whole = str(_js_text(text))
    length = length or 255
    if len(whole) <= length:
        return whole
    if killwords:
        cut = length
    else:
        cut = whole.rfind(" ", 0, length + 1)
        cut = length if cut == -1 else cut
    return whole[:cut] + ("..." if end is None else end)


def _round(value: Any, precision: int = 0, method: str = "common") -> float:
    """Nunjucks' ``round``: ``Math.round`` (halves up), not Python's round-half-to-even."""
    factor = float(10 ** int(precision or 0))
    scaled = float(value) * factor
    if method == "ceil":
        rounded = math.ceil(scaled)
    elif method == "floor":
        rounded = math.floor(scaled)
    else:
        rounded = math.floor(scaled + 0.5)
    return rounded / factor


def _string(value: Any) -> str:
    """Nunjucks' ``string``: ``String(value)``."""
    return str(_js_text(value))


@functools.cache
def _env() -> SandboxedEnvironment:
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(autoescape=False, keep_trailing_newline=True, finalize=_js_text)
    env.filters.update(dump=_dump, load=_load, nl2br=_nl2br, truncate=_truncate, round=_round, string=_string)
    return env


def has_template(text: str) -> bool:
    """Whether ``text`` holds any template syntax (rendering anything else returns it unchanged)."""
    return any(marker in text for marker in _MARKERS)


def render(template: str, variables: Mapping[str, Any], *, env: Mapping[str, Any] | None = None) -> str:
    """Render ``template`` with ``variables`` (and ``env`` as the ``env`` global, promptfoo's config env).
    Raises ``jinja2.TemplateError`` for bad syntax or a failing filter."""
    if not has_template(template):
        return template
    names = dict(variables)
    if env is not None:
        names.setdefault("env", dict(env))
    return _env().from_string(_ELSEIF.sub(r"{%\1 elif", template)).render(names)
