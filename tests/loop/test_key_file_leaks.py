"""The answer key is everything a check reads: the llm proposer across five generations against the scripted
server, in a project whose checks are a script (with a literal and a number of its own) reading a JSON and a CSV
data file, a python check file and a javascript check file (each with a literal), and a judge. The program under
test and the judge echo every one of those values — exact, lower-cased, spaced out, split over a line, base64,
hex and URL-encoded. None reaches a proposer request or a trace copy, judged by the independent leak detector of
tests/leaks.py; the raw traces assay keeps for itself hold them all (the key really flowed through the run).
"""

from __future__ import annotations

import base64
import json
import shutil
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop.engine import Evolution
from tests.fakes.llm_server import ScriptedLLMServer
from tests.leaks import leaked, readings, squash

from .conftest import git
from .test_llm_leaks import ANCHOR, JUDGE_SYSTEM, PROMPT_SENTINEL, PROPOSER_SYSTEM, proposer_reply

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("node") is None, reason="the javascript check needs node"),
]

SCRIPT_LITERAL = "QUOKKA-MARZIPAN-5521"
SCRIPT_NUMBER = "73519"
PYTHON_LITERAL = "PANGOLIN-LANTERN-8842"
JS_LITERAL = "KUMQUAT-3391"
DATA = {"answer": "amber kestrel", "ratio": 0.7391, "phrase": "the lantern of the obsidian harbour at dusk"}
CSV_VALUE = "sorrel thistledown"
SECRETS = [SCRIPT_LITERAL, SCRIPT_NUMBER, PYTHON_LITERAL, JS_LITERAL, *map(str, DATA.values()), CSV_VALUE]
NUMBERS = [SCRIPT_NUMBER, "7391"]  # shorter than the leak detector's six characters: looked for on their own


def leaks(text: str) -> list[str]:
    """The secrets ``text`` reveals in any form, its numbers' digits included."""
    squashed = [squash(reading) for reading in readings(text.replace("[redacted]", " "))]
    return leaked(text, SECRETS) + [n for n in NUMBERS if any(n in s for s in squashed)]


def forms(value: str) -> list[str]:
    half = len(value) // 2
    return [
        value,
        value.lower(),
        " ".join(value),
        value[:half] + "\n" + value[half:],
        base64.b64encode(value.encode()).decode(),
        value.encode().hex(),
        urllib.parse.quote(value),
    ]


CLEAN_LINE = (
    "Your parcel left our warehouse on Monday and the courier expects it within 3 days (ref 2024-17)."
)


def echoes() -> str:
    lines = [f"- {form}" for v in SECRETS for form in forms(v)]
    # (A line that only continues an encoded run would be taken as part of it: base64 may be wrapped.)
    return "Hello! Here is what I know:\n" + "\n".join(lines) + "\n(and nothing else)\n" + CLEAN_LINE


def judge_reply(body: dict[str, Any]) -> str:
    return f"VERDICT: FAIL\nREASON: the key says {DATA['answer'].upper()} and {base64.b64encode(JS_LITERAL.encode()).decode()}"


def write_project(root: Path, url: str) -> Path:
    llm = f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 20}}"
    files = {
        "prompt.md": f"{PROMPT_SENTINEL}\nAnswer the customer.\n{ANCHOR}\n",
        "checks/check_key.py": (
            "import csv, json, sys\n"
            f"CODE = {SCRIPT_LITERAL!r}\nTOTAL = {SCRIPT_NUMBER}\n"
            "key = json.load(open(sys.argv[1]))\n"
            "rows = list(csv.reader(open(sys.argv[2])))\n"
            "out = sys.stdin.read()\n"
            "sys.exit(0 if CODE in out and key['answer'] in out and len(out) < TOTAL else 1)\n"
        ),
        "checks/grade.py": f"def grade(output, context):\n    return {PYTHON_LITERAL!r} in output\n",
        "checks/grade.js": f"module.exports = (output) => output.includes({JS_LITERAL!r});\n",
        "data/key.json": json.dumps(DATA),
        "data/table.csv": f"id,expected\nq1,{CSV_VALUE}\n",
        "cases.yaml": "cases:\n"
        + "".join(f"  - {{id: q{n:02d}, input: 'customer question {n} about tents'}}\n" for n in range(10)),
        "assay.yaml": (
            "artifact: {kind: prompt, paths: [prompt.md]}\n"
            "cases: {files: [cases.yaml]}\n"
            f"runner: {{type: llm, {llm[1:-1]}}}\n"
            f"judge: {{votes: 1, {llm[1:-1]}}}\n"
            "checks:\n"
            "  - {type: script, value: 'python3 checks/check_key.py data/key.json data/table.csv'}\n"
            "  - {type: python, value: 'checks/grade.py:grade'}\n"
            "  - {type: javascript, value: 'file://checks/grade.js'}\n"
            "  - {type: llm_judge, value: 'Polite and complete.'}\n"
            "evolve:\n"
            f"  proposer: {{type: llm, llm: {llm}, show_judge_reasons: true}}\n"
            "  layers: [1]\n  discards_per_layer: 50\n  plateau: 50\n  stop_on_oscillation: false\n"
            "  stop_after_failed: 50\n  tournament: {enabled: false}\n"
        ),
        ".gitignore": ".assay/\n__pycache__/\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return root


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_no_value_of_a_check_file_reaches_the_proposer(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(judge_reply, system=JUDGE_SYSTEM)
    llm_server.add_rule(proposer_reply(), system=PROPOSER_SYSTEM)
    llm_server.default = lambda body: echoes()
    root = write_project(tmp_path / "proj", llm_server.openai_url)
    outcome = run_sync(Evolution(load_config(root / "assay.yaml"), max_generations=5).start())
    files = RunFiles(root / ".assay" / "runs" / outcome.run_id)
    assert outcome.generations == 5
    requests = [r for r in llm_server.requests if r.system.startswith(PROPOSER_SYSTEM)]
    traces = sorted((files.run_dir / "proposer").rglob("*.json"))
    assert len(requests) == 5 and len(traces) >= 5
    assert [leaks(r.system + "\n" + r.user) for r in requests] == [[]] * 5
    assert [leaks(p.read_text()) for p in traces] == [[]] * len(traces)
    # The key flowed through the run: the raw traces hold every value, and the prompts showed the outputs and
    # the judge's reasons (redacted).
    raw = "".join(p.read_text() for p in (files.run_dir / "traces").rglob("traces.jsonl"))
    assert set(leaks(raw)) >= {*SECRETS, *NUMBERS} - {SCRIPT_NUMBER, "0.7391"}  # those two: by their digits
    assert all("Hello! Here is what I know:" in r.user and "judge said:" in r.user for r in requests)
    # A line that holds no key value reaches the proposer as it was written.
    assert all(CLEAN_LINE in r.user for r in requests)
    assert all(CLEAN_LINE in json.loads(p.read_text())["output"]["text_tail"] for p in traces)
