"""promptfoo assertions as their authors wrote them, loaded from a config and run on outputs: JavaScript in
Node and Python with promptfoo's arguments and return shapes, transforms, and the deterministic types."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay.cases.loader import load_case_files
from assay.checks import CheckContext, build_check
from assay.model import Case, Output
from tests.cases._helpers import write

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="javascript assertions need node")


def load(tmp_path: Path, tests: str, *, extra: str = "") -> dict[str, Case]:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        f"prompts: ['Answer: {{{{question}}}}']\nproviders: [openai:gpt-4o-mini]\n{extra}tests:\n{tests}",
    )
    return {case.id: case for case in load_case_files([config]).cases}


def output(case: Case, text: str, **out: Any) -> Output:
    """The output as a runner reports it: with the rendered prompt it answered (context.prompt)."""
    meta = {"prompt": f"Answer: {case.vars.get('question')}", **out.pop("meta", {})}
    return Output(text=text, meta=meta, **out)


async def verdicts(case: Case, text: str, project: Path, **out: Any) -> list[bool]:
    ctx = CheckContext(case=case, project_dir=project)
    results = []
    for spec in case.checks:
        check = build_check(spec)
        check.prepare(project)
        results.append(await check.run(output(case, text, **out), ctx))
    return [r.passed for r in results]


async def evidence(case: Case, text: str, project: Path) -> list[str]:
    ctx = CheckContext(case=case, project_dir=project)
    return [(await build_check(s).run(output(case, text), ctx)).evidence for s in case.checks]


async def test_javascript_gets_promptfoos_arguments(tmp_path: Path) -> None:
    write(
        tmp_path / "graders" / "order.js",
        """\
module.exports = (output, context) => ({
  pass: output.includes(context.vars.order) && context.test.description === 'Order echo',
  score: 0.8,
  reason: `prompt was ${context.prompt}`,
});
module.exports.strict = (output, context) => output.length <= context.config.maxLength;
""",
    )
    cases = load(
        tmp_path,
        """\
  - description: Order echo
    vars: {question: where is A-7?, order: A-7}
    assert:
      - type: javascript
        value: output.startsWith('Order') && context.vars.order === 'A-7'
      - type: javascript
        value: |
          const words = output.split(' ');
          return words.length > 2;
      - type: javascript
        value: file://graders/order.js
      - type: javascript
        value: file://graders/order.js:strict
        config: {maxLength: 12}
      - type: not-javascript
        value: output.includes('sorry')
      - type: javascript
        value: output.length / 100
        threshold: 0.5
      - type: javascript
        value: context.prompt.includes('where is A-7?')
""",
    )
    case = cases["order-echo"]
    assert await verdicts(case, "Order A-7 ships today", tmp_path) == [
        True,
        True,
        True,
        False,
        True,
        False,
        True,
    ]
    assert "prompt was Answer: where is A-7?" in (await evidence(case, "Order A-7 ships", tmp_path))[2]


async def test_python_gets_promptfoos_context_and_return_shapes(tmp_path: Path) -> None:
    write(
        tmp_path / "graders.py",
        """\
def get_assert(output, context):
    return context["vars"]["order"] in output and context["prompt"].startswith("Answer:")

def snake(output, context):
    return {"pass_": False, "score": 1.0, "reason": "pass_ is how Python spells pass"}

def scored(output, context):
    return {"pass": True, "score": 0.4, "reason": "partly"}

def as_text(output, context):
    return "true"

def described(output, context):
    return context["test"]["description"] == "Python shapes" and context["config"] == {"strict": True}
""",
    )
    cases = load(
        tmp_path,
        """\
  - description: Python shapes
    vars: {question: where is A-7?, order: A-7}
    assert:
      - {type: python, value: file://graders.py}
      - {type: python, value: file://graders.py:snake}
      - {type: python, value: file://graders.py:scored}
      - {type: python, value: file://graders.py:scored, threshold: 0.5}
      - {type: python, value: file://graders.py:as_text}
      - {type: python, value: file://graders.py:described, config: {strict: true}}
      - {type: python, value: "len(output) * 0"}
      - {type: python, value: "0.25"}
      - {type: python, value: "context['vars']['order'].lower() in output.lower()"}
""",
    )
    case = cases["python-shapes"]
    assert await verdicts(case, "Order A-7 ships today", tmp_path) == [
        True,
        False,  # {"pass_": False} fails
        True,
        False,  # a score under the assertion's threshold fails
        True,
        True,
        False,  # 0 fails; any number above 0 passes
        True,
        True,
    ]


async def test_transforms_run_before_the_check(tmp_path: Path) -> None:
    write(
        tmp_path / "shape.py",
        "def get_transform(output, context):\n    return output.split('|')[1].strip()\n",
    )
    write(tmp_path / "first.js", "module.exports = (output, context) => output.split('|')[0].trim();\n")
    cases = load(
        tmp_path,
        """\
  - description: Transformed
    vars: {question: q, brand: ACME}
    options:
      transform: output.toUpperCase()
    assert:
      - {type: equals, value: 'LEFT | RIGHT'}
      - {type: equals, value: RIGHT, transform: file://shape.py}
      - {type: equals, value: LEFT, transform: file://first.js}
      - type: javascript
        value: output.brand === context.vars.brand
        transform: '({brand: context.vars.brand})'
""",
    )
    assert await verdicts(cases["transformed"], "left | right", tmp_path) == [True, True, True, True]


async def test_deterministic_types_natively(tmp_path: Path) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    extra = "defaultTest:\n  vars: {question: q}\n"
    cases = load(
        tmp_path,
        f"""\
  - description: Markup
    assert:
      - {{type: is-xml}}
      - {{type: contains-xml, value: {{requiredElements: [order.id]}}}}
      - {{type: not-is-html}}
  - description: Html inside
    assert:
      - {{type: contains-html}}
      - {{type: not-is-html}}
  - description: Sql
    assert:
      - {{type: is-sql}}
      - {{type: contains-sql}}
  - description: Metrics
    assert:
      - {{type: rouge-n, value: the parcel ships on monday}}
      - {{type: bleu, value: the parcel ships on monday, threshold: 0.3}}
      - {{type: levenshtein, value: the parcel ship on monday, threshold: 2}}
      - {{type: word-count, value: {{min: 3, max: 8}}}}
      - {{type: not-gleu, value: completely different words here, threshold: 0.5}}
  - description: Refusal
    assert:
      - {{type: is-refusal}}
      - {{type: icontains-all, value: [sorry, cannot]}}
      - {{type: starts-with, value: "I'm sorry"}}
  - description: Tools
    assert:
      - type: is-valid-openai-tools-call
        value: {json.dumps(tools)}
  - description: Json
    assert:
      - {{type: contains-json, value: {{type: object, required: [days]}}}}
      - {{type: is-json, value: {{type: object, properties: {{days: {{type: integer, maximum: 5}}}}}}}}
  - description: Set
    assert:
      - type: assert-set
        threshold: 0.5
        assert:
          - {{type: contains, value: alpha}}
          - {{type: contains, value: beta}}
  - description: Budget
    assert:
      - {{type: cost, threshold: 0.01}}
      - {{type: latency, threshold: 500}}
      - {{type: finish-reason, value: stop}}
""",
        extra=extra,
    )
    project = tmp_path
    assert await verdicts(cases["markup"], "<order><id>7</id></order>", project) == [True, True, True]
    assert await verdicts(cases["html-inside"], "Here: <p>Hello</p> done", project) == [True, True]
    assert await verdicts(cases["sql"], "SELECT id FROM orders WHERE total > 5", project) == [True, True]
    assert await verdicts(cases["metrics"], "the parcel ships on monday", project) == [True] * 5
    assert await verdicts(cases["metrics"], "no", project) == [False, False, False, False, True]
    assert await verdicts(cases["refusal"], "I'm sorry, I cannot help with that.", project) == [True] * 3
    call = {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    assert await verdicts(cases["tools"], json.dumps([call]), project) == [True]
    bad = {**call, "function": {"name": "get_weather", "arguments": "{}"}}
    assert await verdicts(cases["tools"], json.dumps([bad]), project) == [False]
    assert await verdicts(cases["json"], 'Result: {"days": 3}', project) == [True, False]
    assert await verdicts(cases["json"], '{"days": 9}', project) == [True, False]
    assert await verdicts(cases["json"], '{"days": 4}', project) == [True, True]
    assert await verdicts(cases["set"], "alpha only", project) == [True]
    assert await verdicts(cases["set"], "gamma", project) == [False]
    fast = {"cost_usd": 0.001, "duration_s": 0.2, "meta": {"finish_reason": "stop"}}
    assert await verdicts(cases["budget"], "x", project, **fast) == [True, True, True]
    slow = {"cost_usd": 0.5, "duration_s": 2.0, "meta": {"finish_reason": "length"}}
    assert await verdicts(cases["budget"], "x", project, **slow) == [False, False, False]


@pytest.fixture
def grader_service() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP service on loopback that passes outputs mentioning the order number."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            ok = body["context"]["vars"]["order"] in body["output"]
            payload = json.dumps({"pass": ok, "score": 1.0 if ok else 0.0, "reason": "looked"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/grade", received
    server.shutdown()
    server.server_close()


@pytest.mark.e2e
async def test_webhook_posts_output_and_vars(tmp_path: Path, grader_service: tuple[str, list[Any]]) -> None:
    url, received = grader_service
    cases = load(
        tmp_path,
        f"  - description: Hook\n    vars: {{question: q, order: B-2}}\n    assert:\n      - {{type: webhook, value: '{url}'}}\n",
    )
    assert await verdicts(cases["hook"], "Order B-2 left", tmp_path) == [True]
    assert await verdicts(cases["hook"], "No idea", tmp_path) == [False]
    assert received[0]["output"] == "Order B-2 left" and received[0]["context"]["vars"]["order"] == "B-2"


async def test_unsupported_types_fail_saying_why(tmp_path: Path) -> None:
    cases = load(
        tmp_path,
        "  - description: Moderated\n    vars: {question: q}\n    assert:\n      - {type: moderation}\n",
    )
    (text,) = await evidence(cases["moderated"], "fine", tmp_path)
    assert "moderation" in text and "moderation API" in text
    assert await verdicts(cases["moderated"], "fine", tmp_path) == [False]
