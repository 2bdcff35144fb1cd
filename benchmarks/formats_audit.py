"""Audit how assay reads a folder of other tools' test suites: promptfoo configs and skill-creator evals.

    python benchmarks/formats_audit.py DIR [--kind auto|promptfoo|evals] [--jobs 4] [--json]

Walks DIR for suites — promptfoo configs (a YAML/JSON mapping with promptfoo's top-level keys) and evals
files (``*evals*.json``) — and runs ``assay cases --json FILE`` on each in its own process (as a user
would), with a time limit. Prints: suites found, suites with tests, loaded, refused (grouped by reason),
crashed (an internal error, a timeout or no JSON back), cases, unjudged cases (no checks) and whether
every one of them was reported unjudged, and the most common warnings.

Nothing is sent to a model and no prompt is run; a suite's own test generators, var loaders and
transformVars do run (as they do under promptfoo).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# A promptfoo config names at least one of these (a file of tests alone is not a config).
CONFIG_KEYS = {"prompts", "providers", "targets", "defaultTest", "scenarios", "redteam"}
TIMEOUT_S = 180


@dataclass
class Outcome:
    path: Path
    kind: str
    has_tests: bool
    status: str = "loaded"  # loaded, refused, crashed
    reason: str = ""
    cases: int = 0
    no_checks: int = 0
    reported_unjudged: int = 0
    warnings: list[str] = field(default_factory=list)


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)


def find_suites(root: Path, kind: str) -> list[tuple[Path, str, bool]]:
    """(file, kind, has tests) for every suite under ``root``."""
    found = []
    for path in sorted(root.rglob("*")):
        if (
            not path.is_file()
            or "node_modules" in path.parts
            or path.suffix not in (".yaml", ".yml", ".json")
        ):
            continue
        try:
            data = _load(path)
        except Exception:
            continue
        if kind in ("auto", "evals") and path.suffix == ".json" and "evals" in path.name:
            found.append((path, "evals", True))
        elif kind in ("auto", "promptfoo") and isinstance(data, dict) and data.keys() & CONFIG_KEYS:
            found.append((path, "promptfoo", bool(data.get("tests") or data.get("scenarios"))))
    return found


def reason_of(message: str, path: Path) -> str:
    """An error's reason, without the file, field and quoted values that differ from file to file."""
    text = message.replace(str(path), "").replace(str(path.parent), "")
    text = re.sub(r"(/[^\s:'\"]+)+", "<path>", text)
    parts = [p.strip() for p in text.split(": ") if p.strip()]
    keep = [p for p in parts if not re.fullmatch(r"[\w.\[\]<>*-]+", p) or " " in p]
    text = ": ".join(keep) if keep else text
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.sub(r"\d+", "N", text)[:140]


def audit_one(path: Path, kind: str, has_tests: bool) -> Outcome:
    outcome = Outcome(path, kind, has_tests)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "assay", "cases", "--json", str(path.resolve())],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=path.parent,
            check=False,
        )
    except subprocess.TimeoutExpired:
        outcome.status, outcome.reason = "crashed", f"timed out after {TIMEOUT_S}s"
        return outcome
    try:
        entry = json.loads(proc.stdout)["files"][0]
    except (ValueError, KeyError, IndexError):
        outcome.status = "crashed"
        outcome.reason = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:200]
        return outcome
    if not entry["ok"]:
        outcome.status, outcome.reason = "refused", reason_of(entry["error"] or "", path)
        return outcome
    outcome.cases = len(entry["cases"])
    outcome.no_checks = sum(1 for c in entry["cases"] if not c["checks"])
    outcome.reported_unjudged = sum(1 for c in entry["cases"] if not c["checks"] and c["unjudged"])
    outcome.warnings = entry["warnings"]
    return outcome


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    with_tests = [o for o in outcomes if o.has_tests]
    refused = Counter(o.reason for o in with_tests if o.status == "refused")
    warnings = Counter(reason_of(w, o.path) for o in with_tests for w in o.warnings)
    loaded = [o for o in with_tests if o.status == "loaded"]
    return {
        "suites": len(outcomes),
        "with_tests": len(with_tests),
        "loaded": len(loaded),
        "loaded_share": round(len(loaded) / len(with_tests), 4) if with_tests else None,
        "refused": sum(refused.values()),
        "refused_by_reason": refused.most_common(),
        "crashed": [(str(o.path), o.reason) for o in with_tests if o.status == "crashed"],
        "cases": sum(o.cases for o in loaded),
        "cases_without_checks": sum(o.no_checks for o in loaded),
        "reported_unjudged": sum(o.reported_unjudged for o in loaded),
        "files_with_unjudged": sum(1 for o in loaded if o.no_checks),
        "files_with_checks": sum(1 for o in loaded if o.cases > o.no_checks),
        "top_warnings": warnings.most_common(15),
        "examples_refused": {o.reason: str(o.path) for o in with_tests if o.status == "refused"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--kind", choices=("auto", "promptfoo", "evals"), default="auto")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    suites = find_suites(args.directory, args.kind)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda s: audit_one(*s), suites))
    result = summary(outcomes)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"suites found: {result['suites']}; with tests: {result['with_tests']}")
    print(
        f"loaded: {result['loaded']} ({(result['loaded_share'] or 0):.1%}); refused: {result['refused']}; "
        f"crashed: {len(result['crashed'])}"
    )
    for reason, count in result["refused_by_reason"]:
        print(f"  refused {count:3d}: {reason}  (e.g. {result['examples_refused'][reason]})")
    for path, reason in result["crashed"]:
        print(f"  crashed: {path}: {reason}")
    print(
        f"cases: {result['cases']}; without checks: {result['cases_without_checks']} "
        f"(reported unjudged: {result['reported_unjudged']}) in {result['files_with_unjudged']} files; "
        f"files whose cases have checks: {result['files_with_checks']}"
    )
    print("most common warnings:")
    for warning, count in result["top_warnings"]:
        print(f"  {count:4d}  {warning}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
