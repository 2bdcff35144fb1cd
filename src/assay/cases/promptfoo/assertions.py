"""promptfoo assertions as assay checks.

Every assertion value that is a string is rendered with the test's vars (Nunjucks-style, as promptfoo
does before judging), list items too; ``file://`` values are read relative to the config (JSON and YAML
parsed, other text trimmed), except for ``python`` and ``javascript``, whose files are run. ``not-<type>``
negates. ``weight`` carries over; ``threshold`` means what it means for that type (a limit for ``cost``,
``latency`` and ``levenshtein``, a minimum score elsewhere). ``transform`` (and the test's
``options.transform``) become the check's ``transform`` option. Types assay cannot run here (a provider's
API, traces, ...) load as an ``unsupported`` check that fails with the reason when it runs, and a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import templating
from assay.cases._common import Loc, Notes, expect_mapping, make_spec, number, type_name
from assay.cases.promptfoo.files import FileScope, absolute_ref, read_value_file
from assay.cases.promptfoo.scripts import check_script_file
from assay.checks.node import node_binary, split_file_ref
from assay.model import CheckSpec
from assay.templating import has_template, render

MODEL_GRADED = (
    "llm-rubric",
    "factuality",
    "model-graded-factuality",
    "model-graded-closedqa",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "g-eval",
    "classifier",
    "select-best",
)
UNSUPPORTED: dict[str, str] = {
    "moderation": "needs a provider's moderation API",
    "guardrails": "needs a provider's guardrails API",
    "perplexity": "needs the model's token log-probabilities",
    "perplexity-score": "needs the model's token log-probabilities",
    "pi": "needs the Pi Labs scoring API",
    "search-rubric": "needs a web-search grader",
    "meteor": "needs WordNet synonyms and stemming",
    "ruby": "needs a Ruby runner",
    "trace-span-count": "needs OpenTelemetry traces of the run",
    "trace-span-duration": "needs OpenTelemetry traces of the run",
    "trace-error-spans": "needs OpenTelemetry traces of the run",
    "tool-call-f1": "needs the provider's tool calls",
    "human": "is graded by a person",
    "is-valid-video": "needs a video provider's output",
}
_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")


@dataclass
class Scope:
    """What one test's assertions are read with: the config's folder (``file://`` in values), the case's
    vars (for ``{{ }}``), the test's ``options`` over defaultTest's, and where warnings go."""

    files: FileScope
    notes: Notes
    variables: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> Path:
        return self.files.base


Handler = Callable[[dict[str, Any], Any, Loc, Scope], dict[str, Any]]


def _render(value: Any, loc: Loc, scope: Scope) -> Any:
    try:
        if isinstance(value, str):
            return render(value, scope.variables, env=scope.env)
        if isinstance(value, list):
            return [render(v, scope.variables, env=scope.env) if isinstance(v, str) else v for v in value]
    except templating.TemplateError as exc:
        raise loc.error(f"template error: {exc}") from None
    return value


def _value(data: dict[str, Any], loc: Loc, scope: Scope, *, script: bool) -> Any:
    """The assertion's value, rendered and with ``file://`` read (or, for scripts, made absolute)."""
    value = data.get("value")
    at = loc.at("value")
    if isinstance(value, str) and value.startswith("file://"):
        if script:
            return absolute_ref(value, scope.base)
        return read_value_file(value, at, scope.files)
    if isinstance(value, list):
        value = [
            read_value_file(v, at.at(i), scope.files) if isinstance(v, str) and v.startswith("file://") else v
            for i, v in enumerate(value)
        ]
    return _render(value, at, scope)


def _threshold(data: dict[str, Any], loc: Loc) -> float | None:
    if data.get("threshold") is None:
        return None
    return number(data["threshold"], loc.at("threshold"))


def _unit_threshold(data: dict[str, Any], loc: Loc, default: float | None = None) -> float | None:
    threshold = _threshold(data, loc)
    if threshold is None:
        return default
    if not 0 <= threshold <= 1:
        raise loc.at("threshold").error("less than or equal to 1 and at least 0: expected a score threshold")
    return threshold


def _plain(ours: str, *, exact: bool = False) -> Handler:
    def handle(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
        fields: dict[str, Any] = {"type": ours, "value": value}
        if exact:
            fields["options"] = {"exact": True}
        return fields

    return handle


def _regex(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    # JavaScript's named groups (?<name>...) are Python's (?P<name>...).
    if isinstance(value, str):
        value = _NAMED_GROUP.sub("(?P<", value)
    return {"type": "regex", "value": value}


def _is_json(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    if value is None:
        return {"type": "json_valid"}
    if isinstance(value, str):
        from assay.cases._common import parse_yaml_text

        value = parse_yaml_text(value, loc.at("value"))
    return {"type": "json_schema", "value": value}


def _contains_json(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    if isinstance(value, str):
        from assay.cases._common import parse_yaml_text

        value = parse_yaml_text(value, loc.at("value"))
    return {"type": "contains_json", "value": value}


def _json_properties(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise loc.at("value").error("expected the property names (a list of strings)")
    return {"type": "contains_json", "value": {"type": "object", "required": names}}


def _script(ours: str) -> Handler:
    def handle(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
        if ours == "javascript" and node_binary() is None:
            raise loc.at("type").error("javascript assertions run in Node.js, and `node` is not on PATH")
        if isinstance(value, str) and value.startswith("file://"):
            check_script_file(value, loc.at("value"))
        options: dict[str, Any] = {"pass_rule": "promptfoo", "config": data.get("config") or {}}
        if data.get("threshold") is not None:
            options["threshold"] = number(data["threshold"], loc.at("threshold"))
        return {"type": ours, "value": value, "options": options}

    return handle


def _limit(ours: str) -> Handler:
    def handle(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
        threshold = _threshold(data, loc)
        if threshold is None:
            raise loc.at("threshold").error(f"a {data['type']} assertion needs a threshold (the limit)")
        return {"type": ours, "value": threshold, "threshold": None}

    return handle


def _levenshtein(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    threshold = _threshold(data, loc)
    return {
        "type": "levenshtein",
        "value": value,
        "options": {"max_distance": 5 if threshold is None else threshold},
    }


def _scored(ours: str, default: float | None) -> Handler:
    def handle(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
        return {"type": ours, "value": value, "threshold": _unit_threshold(data, loc, default)}

    return handle


def _similar(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    if data["type"].removeprefix("not-") in ("similar:dot", "similar:euclidean"):
        scope.notes.warn(
            loc.at("type"), "similar:dot and similar:euclidean are measured as cosine similarity"
        )
    return {"type": "similar", "value": value, "threshold": _unit_threshold(data, loc, 0.75)}


def _rubric(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    options: dict[str, Any] = {}
    prompt = data.get("rubricPrompt", scope.options.get("rubricPrompt"))
    if prompt is not None:
        options["rubric_prompt"] = prompt if isinstance(prompt, str) else _render(prompt, loc, scope)
    return {"type": "llm_judge", "value": value, "threshold": _unit_threshold(data, loc), "options": options}


def _factuality(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    scores = scope.options.get("factuality")
    options = {"scores": scores} if isinstance(scores, dict) else {}
    return {"type": "factuality", "value": value, "options": options}


def _graded(ours: str, default: float | None = None, *, value_needed: bool = True) -> Handler:
    def handle(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if data.get("contextTransform") is not None:
            options["context_transform"] = data["contextTransform"]
        if isinstance(data.get("config"), dict):
            options["config"] = data["config"]
        classifier = data.get("provider") or scope.options.get("provider")
        if ours == "classifier" and isinstance(classifier, str | dict):
            options["classifier"] = (
                classifier if isinstance(classifier, str) else str(classifier.get("id", ""))
            )
        fields: dict[str, Any] = {
            "type": ours,
            "threshold": _unit_threshold(data, loc, default),
            "options": options,
        }
        if value is not None or value_needed:
            fields["value"] = value
        return fields

    return handle


def _select_best(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    scope.notes.warn(
        loc.at("type"),
        "select-best compares the outputs of several prompts; assay has one output per case, so its "
        "criterion is judged on that output alone (as llm-rubric)",
    )
    return {"type": "llm_judge", "value": value}


def _word_count(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    return {"type": "word_count", "value": value}


def _tools(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    tools = value if value is not None else scope.files.provider_tools
    if isinstance(tools, str) and tools.startswith("file://"):
        tools = read_value_file(tools, loc, scope.files)
    if isinstance(tools, dict):
        tools = tools.get("tools", tools.get("functions"))
    if not isinstance(tools, list) or not tools:
        raise loc.error(
            f"{data['type']} checks against the provider's tools/functions: give them in `value` "
            "(the provider's config has none that assay could read)"
        )
    functions = [
        t for t in tools if isinstance(t, dict) and isinstance(t.get("function", t).get("name"), str)
    ]
    if not functions:
        return {
            "type": "unsupported",
            "value": f"{data['type']} with tools that are not functions (MCP servers): "
            "the provider calls them, and assay sees no tool calls to validate",
        }
    return {"type": "tool_call_valid", "value": functions}


def _webhook(data: dict[str, Any], value: Any, loc: Loc, scope: Scope) -> dict[str, Any]:
    return {"type": "webhook", "value": value}


HANDLERS: dict[str, Handler] = {
    "equals": _plain("equals", exact=True),
    "contains": _plain("contains"),
    "icontains": _plain("icontains"),
    "contains-any": _plain("contains_any"),
    "contains-all": _plain("contains_all"),
    "icontains-any": _plain("icontains_any"),
    "icontains-all": _plain("icontains_all"),
    "starts-with": _plain("starts_with", exact=True),
    "regex": _regex,
    "is-json": _is_json,
    "contains-json": _contains_json,
    "is-xml": _plain("is_xml"),
    "contains-xml": _plain("contains_xml"),
    "is-html": _plain("is_html"),
    "contains-html": _plain("contains_html"),
    "is-sql": _plain("is_sql"),
    "contains-sql": _plain("contains_sql"),
    "is-refusal": _plain("is_refusal"),
    "empty": _plain("empty"),
    "min-length": _plain("min_length"),
    "max-length": _plain("max_length"),
    "json-schema-valid": _is_json,
    "contains-json-property": _json_properties,
    "finish-reason": _plain("finish_reason"),
    "word-count": _word_count,
    "levenshtein": _levenshtein,
    "rouge-n": _scored("rouge_n", 0.75),
    "bleu": _scored("bleu", 0.5),
    "gleu": _scored("gleu", 0.5),
    "python": _script("python"),
    "javascript": _script("javascript"),
    "webhook": _webhook,
    "is-valid-openai-tools-call": _tools,
    "is-valid-openai-function-call": _tools,
    "is-valid-function-call": _tools,
    "cost": _limit("cost"),
    "latency": _limit("latency"),
    "similar": _similar,
    "similar:cosine": _similar,
    "similar:dot": _similar,
    "similar:euclidean": _similar,
    "llm-rubric": _rubric,
    "factuality": _factuality,
    "model-graded-factuality": _factuality,
    "model-graded-closedqa": _graded("closed_qa"),
    "answer-relevance": _graded("answer_relevance", 0.0, value_needed=False),
    "context-faithfulness": _graded("context_faithfulness", 0.0, value_needed=False),
    "context-recall": _graded("context_recall", 0.0),
    "context-relevance": _graded("context_relevance", 0.0, value_needed=False),
    "conversation-relevance": _graded("conversation_relevance", 0.5, value_needed=False),
    "g-eval": _graded("g_eval", 0.7),
    "classifier": _graded("classifier", 1.0),
    "select-best": _select_best,
}
SCRIPT_TYPES = ("python", "javascript")
# Types compared with a reference text, which an empty value makes meaningless.
REFERENCE_TYPES = frozenset(
    (
        "similar",
        "similar:cosine",
        "similar:dot",
        "similar:euclidean",
        "rouge-n",
        "bleu",
        "gleu",
        "levenshtein",
    )
)
# Types some promptfoo examples use that promptfoo itself does not define.
NOT_PROMPTFOO = {
    "empty": "an empty output",
    "min-length": "a minimum number of characters",
    "max-length": "a maximum number of characters",
    "json-schema-valid": "is-json with the value as the schema",
    "contains-json-property": "contains-json whose object has these properties",
}
KNOWN_KEYS = frozenset(
    (
        "type",
        "value",
        "threshold",
        "weight",
        "transform",
        "metric",
        "provider",
        "rubricPrompt",
        "config",
        "contextTransform",
        "assert",
    )
)


def _unsupported(kind: str, reason: str, data: dict[str, Any], loc: Loc, scope: Scope) -> CheckSpec:
    scope.notes.warn(loc.at("type"), f"{kind} {reason}: assay cannot run it, so the check fails when it runs")
    fields: dict[str, Any] = {"type": "unsupported", "value": f"{kind} {reason}"}
    if data.get("weight") is not None:
        fields["weight"] = data["weight"]
    return make_spec(fields, loc)


def _transforms(data: dict[str, Any], loc: Loc, scope: Scope) -> list[str]:
    out = []
    for where, code in (
        ("options.transform", scope.options.get("transform")),
        ("transform", data.get("transform")),
    ):
        if code is None:
            continue
        if not isinstance(code, str) or not code.strip():
            raise loc.at(where).error(f"expected code or a file:// path, got {type_name(code)}")
        code = absolute_ref(code, scope.base) if code.startswith("file://") else code
        if not split_file_ref(code)[0].endswith(".py") and node_binary() is None:
            raise loc.at(where).error("JavaScript transforms run in Node.js, and `node` is not on PATH")
        out.append(code)
    return out


def map_assertion(data: Any, loc: Loc, scope: Scope) -> CheckSpec | None:
    """Translate one promptfoo assertion into a validated CheckSpec (None: dropped, with a warning)."""
    data = expect_mapping(data, loc, "an assertion (a mapping with type and value)")
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise loc.at("type").error("required field is missing" if kind is None else "expected a string")
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    for key in data:
        if key not in KNOWN_KEYS:
            scope.notes.warn(loc.at(str(key)), "not read by assay")
    if data.get("metric") is not None:
        scope.notes.warn(loc.at("metric"), "metric names are not kept (assay reports each check by type)")
    if base == "assert-set":
        return _assert_set(data, loc, scope, negate)
    if base == "max-score":
        scope.notes.warn(
            loc.at("type"),
            "max-score picks the best of several outputs; assay has one output per case, so it is dropped",
        )
        return None
    if base.startswith(("promptfoo:redteam:", "trace-")) or base in UNSUPPORTED:
        return _unsupported(
            base, UNSUPPORTED.get(base, "needs promptfoo's red-team graders"), data, loc, scope
        )
    if base.startswith("select-"):
        return _unsupported(base, "compares several outputs", data, loc, scope)
    handler = HANDLERS.get(base)
    if handler is None:
        known = ", ".join(sorted(HANDLERS))
        raise loc.at("type").error(
            f"unknown promptfoo assertion type {kind!r}; known: {known} (each also as not-<type>)"
        )
    if data.get("provider") is not None and base in MODEL_GRADED and base != "classifier":
        scope.notes.warn(loc.at("provider"), "the grading provider is not used: assay's judge model grades")
    if data.get("config") is not None and base not in SCRIPT_TYPES and base not in MODEL_GRADED:
        scope.notes.warn(loc.at("config"), "not used by this assertion type in assay")
    if base in NOT_PROMPTFOO:
        scope.notes.warn(
            loc.at("type"),
            f"{kind} is not a promptfoo assertion type (promptfoo rejects it); "
            f"assay reads it as {NOT_PROMPTFOO[base]}",
        )
    if kind == "not-python":
        scope.notes.warn(
            loc.at("type"),
            "promptfoo 0.120 ignores the not- of a python assertion (it passes when the code returns true); "
            "assay negates it, as promptfoo documents",
        )
    value = _value(data, loc, scope, script=base in SCRIPT_TYPES)
    given = data.get("value")
    rendered_empty = isinstance(value, str) and not value.strip()
    if base in REFERENCE_TYPES and isinstance(given, str) and has_template(given) and rendered_empty:
        # promptfoo renders it empty too and compares with nothing; the case must not be refused whole
        why = f"its value {given!r} renders empty for this test (a var it names is not set)"
        scope.notes.warn(loc.at("value"), f"{why}: the check fails when it runs")
        return make_spec({"type": "unsupported", "value": f"{kind}: {why}"}, loc)
    script_file = split_file_ref(value)[0] if isinstance(value, str) and value.startswith("file://") else ""
    if base in SCRIPT_TYPES and script_file.endswith((".ts", ".cts", ".mts", ".rb")):
        name = script_file.rsplit("/", 1)[-1]
        return _unsupported(base, f"in {name} needs a TypeScript or Ruby runner", data, loc, scope)
    fields = handler(data, value, loc, scope)
    if fields["type"] == "unsupported":
        scope.notes.warn(loc.at("type"), f"{fields['value']}: the check fails when it runs")
    fields.setdefault("threshold", None)
    fields["negate"] = negate
    if data.get("weight") is not None:
        fields["weight"] = data["weight"]
    transforms = _transforms(data, loc, scope)
    if transforms:
        fields["options"] = {**fields.get("options", {}), "transform": transforms}
    return make_spec(fields, loc)


def _assert_set(data: dict[str, Any], loc: Loc, scope: Scope, negate: bool) -> CheckSpec:
    items = data.get("assert")
    if not isinstance(items, list) or not items:
        raise loc.at("assert").error("an assert-set needs a list of assertions under `assert`")
    parts = [map_assertion(item, loc.at("assert", i), scope) for i, item in enumerate(items)]
    specs = [p.model_dump(exclude_defaults=True) for p in parts if p is not None]
    if not specs:
        raise loc.at("assert").error("no assertion of the set can be checked")
    fields: dict[str, Any] = {"type": "assert_set", "value": specs, "negate": negate}
    fields["threshold"] = _unit_threshold(data, loc)
    if data.get("weight") is not None:
        fields["weight"] = data["weight"]
    return make_spec(fields, loc)
