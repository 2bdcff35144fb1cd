"""Text checks: equals, contains (and its case-insensitive, negative, any/all forms), starts_with, regex."""

from __future__ import annotations

import functools
import json
import re
import warnings
from typing import TYPE_CHECKING, Any, ClassVar

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.model import CheckResult, CheckSpec, Output

if TYPE_CHECKING:
    import regex

EVIDENCE_CHARS = 200
REGEX_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL", "x": "VERBOSE", "a": "ASCII"}
# The longest a regex check may search one output. Patterns that backtrack without end on some text (nested
# quantifiers such as ``(a+)+$``) would otherwise hang the run on the output that triggers them.
REGEX_SECONDS = 2.0
# A search keeps the interpreter lock (``concurrent=False``): the regex module lets it go by default, and taking it
# back waits for whichever thread holds it meanwhile (0.4 ms a search against 2 µs, with one busy thread).
REGEX_CONCURRENT = False


def clip(text: str, limit: int = EVIDENCE_CHARS) -> str:
    """Shorten ``text`` to about ``limit`` characters for evidence, marking the cut with an ellipsis."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(text: str, limit: int = 80) -> str:
    """``text`` clipped and quoted with repr, for evidence lines such as ``found 'foo'``."""
    return repr(clip(text, limit))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def scalar_text(spec: CheckSpec, *, required: bool = True) -> str | None:
    """The spec's value as non-empty text (numbers are accepted as their text); CheckSpecError otherwise."""
    value = spec.value
    if value is None:
        if required:
            raise CheckSpecError(f"{spec.type}: value is required")
        return None
    if not _is_scalar(value):
        raise CheckSpecError(f"{spec.type}: value must be text, got {type(value).__name__}")
    text = str(value)
    if not text:
        raise CheckSpecError(f"{spec.type}: value must not be empty")
    return text


def text_list(spec: CheckSpec) -> list[str]:
    """The spec's value as a list of non-empty strings: a list, or a comma-separated string (promptfoo)."""
    value = spec.value
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list | tuple):
        items = []
        for item in value:
            if not _is_scalar(item):
                raise CheckSpecError(f"{spec.type}: every value item must be text, got {type(item).__name__}")
            items.append(str(item))
    elif value is None:
        raise CheckSpecError(f"{spec.type}: value is required (a list of strings)")
    else:
        raise CheckSpecError(f"{spec.type}: value must be a list of strings, got {type(value).__name__}")
    items = [item for item in items if item]
    if not items:
        raise CheckSpecError(f"{spec.type}: value must list at least one non-empty string")
    return items


def _flag(spec: CheckSpec, name: str, default: bool = False) -> bool:
    flag = spec.options.get(name, default)
    if not isinstance(flag, bool):
        raise CheckSpecError(f"{spec.type}: option {name} must be true or false")
    return flag


def _ignore_case(spec: CheckSpec, default: bool = False) -> bool:
    return _flag(spec, "ignore_case", default)


def _context(text: str, start: int, end: int, width: int = 40) -> str:
    """The matched span with a little text on either side, for evidence."""
    left = max(0, start - width)
    right = min(len(text), end + width)
    snippet = text[left:right].replace("\n", "\\n")
    return ("…" if left else "") + snippet + ("…" if right < len(text) else "")


@CHECKS.register("equals")
class EqualsCheck(Check):
    """The output equals ``value`` (or the case's ``expected`` when value is unset), ignoring trailing
    whitespace unless option ``exact`` is set. A dict or list value is compared with the output parsed as
    JSON. Option ``ignore_case``."""

    name = "equals"
    text_value = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.ignore_case = _ignore_case(spec)
        self.exact = _flag(spec, "exact")
        self.structured = isinstance(spec.value, dict | list)
        if not self.structured and spec.value is not None and not _is_scalar(spec.value):
            raise CheckSpecError(f"equals: value must be text, got {type(spec.value).__name__}")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        if self.structured:
            return self._equals_json(output.text)
        expected = self.spec.value if self.spec.value is not None else ctx.case.expected
        if expected is None:
            return self.result(False, evidence="equals: no value given and the case has no expected output")
        want, got = (
            (str(expected), output.text) if self.exact else (str(expected).rstrip(), output.text.rstrip())
        )
        same = want.casefold() == got.casefold() if self.ignore_case else want == got
        if same:
            return self.result(True, evidence="output equals the expected text")
        return self.result(
            False, evidence=f"expected {quote(want)}, got {quote(got)}{_first_diff(want, got)}"
        )

    def _equals_json(self, text: str) -> CheckResult:
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            return self.result(False, evidence=f"expected JSON equal to the value; output is not JSON: {exc}")
        if parsed == self.spec.value:
            return self.result(True, evidence="output JSON equals the expected value")
        got = json.dumps(parsed, ensure_ascii=False)
        return self.result(
            False, evidence=f"expected {clip(json.dumps(self.spec.value), 80)}, got {clip(got, 80)}"
        )


def _first_diff(want: str, got: str) -> str:
    for index, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            return f" (first difference at character {index})"
    return f" (lengths {len(want)} vs {len(got)})"


@CHECKS.register("contains")
class ContainsCheck(Check):
    """The output contains ``value``. Option ``ignore_case`` (``icontains`` sets it by default)."""

    name = "contains"
    text_value = True
    ignore_case_default: ClassVar[bool] = False

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.needle = scalar_text(spec) or ""
        self.ignore_case = _ignore_case(spec, self.ignore_case_default)

    def find(self, text: str) -> int:
        if self.ignore_case:
            return text.casefold().find(self.needle.casefold())
        return text.find(self.needle)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        at = self.find(output.text)
        if at >= 0:
            return self.result(True, evidence=f"found at character {at}")
        return self.result(False, evidence=f"{quote(self.needle)} not found in output {quote(output.text)}")


@CHECKS.register("icontains")
class IContainsCheck(ContainsCheck):
    """The output contains ``value``, ignoring case."""

    name = "icontains"
    ignore_case_default = True


@CHECKS.register("not_contains")
class NotContainsCheck(ContainsCheck):
    """The output does not contain ``value`` (option ``ignore_case``)."""

    name = "not_contains"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        at = self.find(output.text)
        if at < 0:
            return self.result(True, evidence="forbidden text absent")
        end = at + len(self.needle)
        return self.result(
            False, evidence=f"forbidden text found at character {at}: {_context(output.text, at, end)}"
        )


class _ContainsManyCheck(Check):
    """Shared parsing for ``contains_any`` / ``contains_all`` and their case-insensitive forms."""

    ignore_case_default: ClassVar[bool] = False

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.needles = text_list(spec)
        self.ignore_case = _ignore_case(spec, self.ignore_case_default)

    def split(self, text: str) -> tuple[list[str], list[str]]:
        haystack = text.casefold() if self.ignore_case else text
        found: list[str] = []
        missing: list[str] = []
        for needle in self.needles:
            (found if (needle.casefold() if self.ignore_case else needle) in haystack else missing).append(
                needle
            )
        return found, missing


@CHECKS.register("contains_any")
class ContainsAnyCheck(_ContainsManyCheck):
    """The output contains at least one of the ``value`` strings."""

    name = "contains_any"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        found, _ = self.split(output.text)
        if found:
            return self.result(True, evidence=clip(f"found {', '.join(map(repr, found))}"))
        return self.result(
            False, evidence=clip(f"none of {len(self.needles)} found: {', '.join(map(repr, self.needles))}")
        )


@CHECKS.register("contains_all")
class ContainsAllCheck(_ContainsManyCheck):
    """The output contains every ``value`` string; the score is the fraction found."""

    name = "contains_all"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        found, missing = self.split(output.text)
        score = len(found) / len(self.needles)
        if not missing:
            return self.result(True, 1.0, f"all {len(self.needles)} found")
        return self.result(
            False,
            score,
            clip(f"{len(found)}/{len(self.needles)} found; missing {', '.join(map(repr, missing))}"),
        )


@CHECKS.register("icontains_any")
class IContainsAnyCheck(ContainsAnyCheck):
    """``contains_any``, ignoring case."""

    name = "icontains_any"
    ignore_case_default = True


@CHECKS.register("icontains_all")
class IContainsAllCheck(ContainsAllCheck):
    """``contains_all``, ignoring case."""

    name = "icontains_all"
    ignore_case_default = True


@CHECKS.register("starts_with")
class StartsWithCheck(Check):
    """The output, after leading whitespace (unless option ``exact``), starts with ``value``. Option
    ``ignore_case``."""

    name = "starts_with"
    text_value = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.prefix = scalar_text(spec) or ""
        self.ignore_case = _ignore_case(spec)
        self.exact = _flag(spec, "exact")

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        text = output.text if self.exact else output.text.lstrip()
        head = text[: len(self.prefix)]
        same = head.casefold() == self.prefix.casefold() if self.ignore_case else head == self.prefix
        if same:
            return self.result(True, evidence="output starts with the expected prefix")
        return self.result(False, evidence=f"expected start {quote(self.prefix)}, got {quote(head)}")


def compile_pattern(spec: CheckSpec, pattern: Any) -> regex.Pattern[str]:
    """Compile ``pattern`` with the spec's ``flags`` option (letters from ``imsxa``); CheckSpecError if bad.

    The engine is the ``regex`` module in its ``re``-compatible mode: the same syntax as Python's ``re`` (and
    ``\\p{L}``-style classes, which JavaScript patterns from promptfoo use), and a time bound per search."""
    import regex  # here: about 7 ms to import, paid only by a run that has a regex check

    if not isinstance(pattern, str) or not pattern:
        raise CheckSpecError(f"{spec.type}: value must be a non-empty regex pattern")
    letters = spec.options.get("flags", "")
    if not isinstance(letters, str):
        raise CheckSpecError(f"{spec.type}: option flags must be a string of letters from 'imsxa'")
    flags = 0
    for letter in letters:
        if letter not in REGEX_FLAGS:
            raise CheckSpecError(f"{spec.type}: unknown regex flag {letter!r}; use letters from 'imsxa'")
        flags |= getattr(regex, REGEX_FLAGS[letter])
    try:
        return _compiled(pattern, flags)
    except regex.error as exc:
        raise CheckSpecError(f"{spec.type}: invalid pattern {pattern!r}: {exc}") from None


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    """One compiled pattern for every check that names it (cases of a run often share one): the ``regex``
    module's own cache is behind a slower call than this."""
    import regex

    with warnings.catch_warnings():
        # `[[` reads as `re` reads it in this mode; the warning is about another mode's nested sets
        warnings.simplefilter("ignore", FutureWarning)
        return regex.compile(pattern, flags)


@CHECKS.register("regex")
class RegexCheck(Check):
    """The output matches the regex ``value`` somewhere (a search). Option ``flags``: e.g. ``"im"``. A search
    that finds no answer within ``REGEX_SECONDS`` is a check error (a failed check that says so)."""

    name = "regex"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.pattern = compile_pattern(spec, spec.value)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        try:
            match = self.pattern.search(output.text, timeout=REGEX_SECONDS, concurrent=REGEX_CONCURRENT)
        except TimeoutError:
            raise TimeoutError(
                f"no answer within {REGEX_SECONDS:g} s on an output of {len(output.text)} characters: the "
                "pattern backtracks too much on it (nested repeats such as (a+)+ are the usual cause)"
            ) from None
        if match:
            return self.result(
                True, evidence=f"matched at character {match.start()}: {quote(match.group(0))}"
            )
        return self.result(False, evidence=f"no match in output {quote(output.text)}")


_REFUSAL_SUBJECTS = (
    r"i (?:cannot|can ?not|can't|won't|will not|must not|do not|don't|am unable to|'m unable to|am not able to"
    r"|'m not able to|am not going to|'m not going to)"
)
_REFUSAL_VERBS = (
    "help|assist|provide|comply|fulfil+|answer|create|write|generate|support|engage|participate|give|share"
    "|recommend|suggest|do that|continue"
)
_REFUSALS = re.compile(
    rf"^(?:i'm sorry|i am sorry|sorry|i apologi[sz]e|my apologies|i'm really sorry|i am really sorry)\b"
    rf"|\b{_REFUSAL_SUBJECTS} (?:actually )?(?:{_REFUSAL_VERBS})\b"
    r"|\b(?:as an ai|as a language model|as an assistant)\b"
    r"|\bi (?:must|have to|need to) (?:respectfully )?decline\b"
    r"|\b(?:is|would be|isn't|is not) (?:not )?(?:appropriate|ethical|legal)\b"
    r"|\bi (?:do not|don't) feel comfortable\b",
    re.IGNORECASE,
)


def is_refusal(text: str) -> bool:
    """Whether an output reads as a refusal: empty, opening with an apology, or holding a phrase such as
    "I can't help", "I'm unable to provide", "as an AI" (a heuristic, as promptfoo's ``is-refusal``)."""
    text = text.replace("’", "'").strip()
    return not text or _REFUSALS.search(text) is not None


@CHECKS.register("is_refusal")
class IsRefusalCheck(Check):
    """The output is a refusal (see :func:`is_refusal`); negate it to require an answer."""

    name = "is_refusal"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        if not output.text.strip():
            return self.result(True, evidence="the output is empty, taken as a refusal")
        if is_refusal(output.text):
            return self.result(True, evidence=f"reads as a refusal: {quote(output.text, 60)}")
        return self.result(False, evidence=f"does not read as a refusal: {quote(output.text, 60)}")


@CHECKS.register("empty")
class EmptyCheck(Check):
    """The output is empty or only whitespace (negate it, ``not-empty``, to require content)."""

    name = "empty"

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        if output.text.strip():
            return self.result(False, evidence=f"the output has {len(output.text.strip())} characters")
        return self.result(True, evidence="the output is empty")


class _LengthCheck(Check):
    longest: ClassVar[bool]

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        value = spec.value
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CheckSpecError(f"{spec.type}: value must be a number of characters (a whole number >= 0)")
        self.limit = value

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        length = len(output.text)
        ok = length <= self.limit if self.longest else length >= self.limit
        bound = "at most" if self.longest else "at least"
        return self.result(ok, evidence=f"{length} characters; expected {bound} {self.limit}")


@CHECKS.register("min_length")
class MinLengthCheck(_LengthCheck):
    """The output has at least ``value`` characters."""

    name = "min_length"
    longest = False


@CHECKS.register("max_length")
class MaxLengthCheck(_LengthCheck):
    """The output has at most ``value`` characters."""

    name = "max_length"
    longest = True
