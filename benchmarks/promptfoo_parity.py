"""Does assay judge a promptfoo suite as promptfoo does? Run both on the same suite and compare.

    python benchmarks/promptfoo_parity.py --promptfoo /path/to/node_modules/.bin/promptfoo [--suite DIR]

The suite (default ``benchmarks/promptfoo_parity``: javascript, python and templated assertions, list and
file vars, transforms, transformVars, CSV and JSONL tests, thresholds, weights, an assert-set) uses an
``exec:`` provider that answers from a fixed table, so no model and no API key is involved and both tools
judge the same outputs. promptfoo runs ``promptfoo eval -o out.json``; assay runs ``assay init`` (which
maps the config's prompt and provider) and ``assay eval --json``. Tests are paired in order (promptfoo's
test index, assay's case order) and their descriptions must agree. Prints pass/fail per test from both, and
per assertion where both report the same number of them, then the agreement (share of tests, and of
assertions, with the same verdict); exits 1 on any difference.

Known difference, left out of the suite: promptfoo 0.120 ignores the ``not-`` of ``not-python`` (assay
negates it, as promptfoo documents, and warns when loading).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SUITE = Path(__file__).with_name("promptfoo_parity")


def run_promptfoo(promptfoo: str, suite: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    subprocess.run(
        [
            promptfoo,
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "-o",
            "out.json",
            "--no-cache",
            "--no-progress-bar",
        ],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    results = json.loads((suite / "out.json").read_text())["results"]["results"]
    return sorted(results, key=lambda r: r["testIdx"])


def run_assay(suite: Path) -> tuple[list[dict[str, Any]], dict[str, str | None]]:
    assay = [sys.executable, "-m", "assay"]
    subprocess.run([*assay, "init"], cwd=suite, check=True, capture_output=True)
    proc = subprocess.run(
        [*assay, "eval", "--json", "-q"], cwd=suite, capture_output=True, text=True, check=False
    )
    cases = json.loads(proc.stdout)["cases"]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from assay.cases import load_cases

    described = {c.id: c.description for c in load_cases([suite / "promptfooconfig.yaml"])}
    order = list(described)
    return sorted(cases, key=lambda c: order.index(c["id"])), described


def compare(
    promptfoo: list[dict[str, Any]], assay: list[dict[str, Any]], described: dict[str, str | None]
) -> int:
    differences = 0
    checks_same = checks_total = 0
    print(f"{'test':45s} {'promptfoo':>9s} {'assay':>6s}")
    for theirs, ours in zip(promptfoo, assay, strict=True):
        name = theirs["testCase"].get("description") or "?"
        if described[ours["id"]] != name:
            print(f"  order differs: promptfoo {name!r} vs assay {ours['id']!r}")
            differences += 1
        same = theirs["success"] == ours["passed"]
        differences += not same
        mark = "" if same else "   <-- differs"
        print(
            f"{name[:45]:45s} {('PASS' if theirs['success'] else 'FAIL'):>9s} {('PASS' if ours['passed'] else 'FAIL'):>6s}{mark}"
        )
        components = (theirs.get("gradingResult") or {}).get("componentResults") or []
        ours_checks = [c for c in ours["checks"] if c["type"] != "runner"]
        if len(components) == len(ours_checks):
            for component, check in zip(components, ours_checks, strict=True):
                checks_total += 1
                # promptfoo reports an assertion of weight 0 as passed whatever it found; assay reports what it
                # found, and neither lets it fail the test.
                weight = (component.get("assertion") or {}).get("weight")
                agree = bool(component.get("pass")) == check["passed"] or weight == 0
                checks_same += agree
                if not agree:
                    kind = (component.get("assertion") or {}).get("type")
                    print(
                        f"    assertion {kind}: promptfoo {component.get('pass')} ({component.get('reason', '')[:60]!r}),"
                        f" assay {check['passed']} ({check['evidence'][:60]!r})"
                    )
    passed_pf = sum(r["success"] for r in promptfoo)
    passed_assay = sum(bool(c["passed"]) for c in assay)
    same_tests = len(promptfoo) - differences
    print(
        f"\ntests: {len(promptfoo)}; promptfoo passed {passed_pf}, assay passed {passed_assay}; "
        f"verdicts that differ: {differences}"
    )
    print(f"assertions compared one by one: {checks_total}; same verdict: {checks_same}")
    print(
        f"agreement: tests {same_tests}/{len(promptfoo)} ({same_tests / max(1, len(promptfoo)):.1%}), "
        f"assertions {checks_same}/{checks_total} ({checks_same / max(1, checks_total):.1%})"
    )
    return differences + (checks_total - checks_same)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--promptfoo", required=True, help="the promptfoo executable (e.g. node_modules/.bin/promptfoo)"
    )
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--keep", type=Path, help="keep both runs' folders (results, traces) here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        theirs_dir, ours_dir = work / "promptfoo", work / "assay"
        shutil.copytree(args.suite, theirs_dir)
        shutil.copytree(args.suite, ours_dir)
        theirs = run_promptfoo(args.promptfoo, theirs_dir)
        ours, described = run_assay(ours_dir)
        return 1 if compare(theirs, ours, described) else 0


if __name__ == "__main__":
    sys.exit(main())
