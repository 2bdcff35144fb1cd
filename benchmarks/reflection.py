"""Does showing the failing cases' outputs inline help the llm proposer? The same scripted task and model, with
the prompt as it is (outputs inline, redacted, within the token budget) and as it was (failing cases by id and
trace file paths, which a chat model cannot open).

The task: a program under test (read-only, never shown) parses sentences and prints the first word it does not
know (``unknown word: 'zorblax'``); the artifact is the list of words it knows. ``--words`` hidden words are
spread over ``--cases`` cases (two or three words per sentence); a case passes when every word of its sentence
is known. The words appear nowhere a proposer could see them but in the program's output.

The model (the scripted OpenAI-compatible server, through the real SDK) adds every unknown word it can read in
the prompt; when it reads none, it adds a guess drawn from a pool of ``--pool`` plausible words that holds the
hidden ones. Reported per prompt: the dev pass rate after each generation (mean over seeds), the generations
until every dev case passes (or "no" within ``--generations``), and the mean prompt size in tokens (estimated).

Run: python benchmarks/reflection.py [--seeds 3] [--cases 30] [--words 12] [--generations 8] [--pool 200]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from assay.aio import run_sync
from assay.config import load_config
from assay.history.runfiles import RunFiles
from assay.loop import proposing
from assay.loop.engine import Evolution
from assay.proposers.budget import estimate_tokens

sys.path.insert(0, str(Path(__file__).parents[1]))  # for tests.fakes.llm_server
from tests.fakes.llm_server import ScriptedLLMServer

PROPOSER_SYSTEM = "You improve an artifact"
UNKNOWN = re.compile(r"unknown word: '(\w+)'")
LABEL = re.compile(r"^\[(\d+)\] case ", re.MULTILINE)
TRACE = re.compile(r"^- (/\S+\.json)$", re.MULTILINE)
KNOWN = ["alpha", "beta", "gamma", "delta"]
PARSER = """
import json, sys
sentences = json.load(open("sentences.json"))
known = {line.strip() for line in open("vocab.txt") if line.strip()}
words = sentences[sys.argv[1].split()[-1]].split()
for n, word in enumerate(words):
    if word not in known:
        print(f"read {n} of {len(words)} words; unknown word: '{word}'")
        break
else:
    print("every word understood")
"""


def pseudo_word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(6, 9)))


def make_project(root: Path, url: str, *, seed: int, cases: int, words: int) -> list[str]:
    """The project, and the hidden words."""
    rng = random.Random(seed)
    hidden = [pseudo_word(rng) for _ in range(words)]
    sentences = {
        f"{n}": " ".join(rng.sample(KNOWN, 2) + rng.sample(hidden, rng.randint(1, 2))) for n in range(cases)
    }
    root.mkdir(parents=True)
    (root / "vocab.txt").write_text("\n".join(KNOWN) + "\n")
    (root / "parse.py").write_text(PARSER)
    (root / "sentences.json").write_text(json.dumps(sentences))
    specs = [
        {"id": f"s{n:02d}", "input": f"sentence {n}", "checks": [{"contains": "every word understood"}]}
        for n in range(cases)
    ]
    (root / "cases.yaml").write_text(yaml.safe_dump({"cases": specs}, sort_keys=False))
    llm = f"{{model: 'openai:scripted', base_url: '{url}', max_retries: 0, timeout: 30}}"
    (root / "assay.yaml").write_text(
        "artifact: {kind: config, paths: [vocab.txt], forbid: [parse.py, sentences.json, cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'python parse.py {input}', timeout: 20}\n"
        f"evolve:\n  proposer: {{type: llm, llm: {llm}}}\n  tournament: {{enabled: false}}\n"
        "  layers: [1]\n  discards_per_layer: 1000\n  plateau: 1000\n  stop_on_oscillation: false\n"
        "  wall_clock_s: 86400\n"
    )
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start"], cwd=root, check=True
    )
    return hidden


def model(hidden: list[str], pool_size: int, seed: int) -> Any:
    rng = random.Random(seed * 7919)
    pool = hidden + [pseudo_word(rng) for _ in range(pool_size - len(hidden))]

    def reply(body: dict[str, Any]) -> str:
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        words = sorted(set(UNKNOWN.findall(text))) or [rng.choice(pool)]
        labels, traces = LABEL.findall(text), TRACE.findall(text)
        cite = f"[{labels[0]}]" if labels else (traces[0] if traces else "none")
        added = "\n".join(words)
        return (
            f"DESCRIPTION: teach {len(words)} words\nCITES: {cite}\n\nvocab.txt\n"
            f"<<<<<<< SEARCH\n=======\n{added}\n>>>>>>> REPLACE\n"
        )

    return reply


def run(mode: str, seed: int, args: argparse.Namespace) -> tuple[list[float], list[int]]:
    """Dev pass rate after each generation (the best so far), and the prompt sizes in tokens."""
    original = proposing.build_view

    def paths_only(**kwargs: Any) -> Any:
        view = original(**kwargs)
        view.reflections = []
        return view

    proposing.build_view = paths_only if mode == "paths only" else original  # type: ignore[assignment]
    try:
        with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "proj"
            hidden = make_project(root, server.openai_url, seed=seed, cases=args.cases, words=args.words)
            server.add_rule(model(hidden, args.pool, seed), system=PROPOSER_SYSTEM)
            evolution = Evolution(load_config(root / "assay.yaml"), max_generations=args.generations)
            outcome = run_sync(evolution.start())
            records = RunFiles(root / ".assay" / "runs" / outcome.run_id).read_candidates()
            prompts = [
                estimate_tokens(r.system) + estimate_tokens(r.user)
                for r in server.requests
                if r.system.startswith(PROPOSER_SYSTEM)
            ]
    finally:
        proposing.build_view = original  # type: ignore[assignment]
    best, curve = 0.0, []
    for record in records[1:]:
        if record.decision == "keep":
            best = max(best, record.dev_pass_rate or 0.0)
        curve.append(best)
    base = records[0].dev_pass_rate or 0.0
    curve = [max(base, value) for value in curve]
    curve += [curve[-1] if curve else base] * (args.generations - len(curve))
    return curve, prompts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--words", type=int, default=12)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--pool", type=int, default=200)
    args = parser.parse_args()
    results: dict[str, tuple[list[list[float]], list[int]]] = {}
    for mode in ("inline", "paths only"):
        curves, sizes = [], []
        for seed in range(args.seeds):
            curve, prompts = run(mode, seed, args)
            curves.append(curve)
            sizes += prompts
        results[mode] = (curves, sizes)
    print(
        f"{args.cases} cases, {args.words} hidden words, {args.seeds} seeds, {args.generations} generations"
    )
    print(
        f"{'prompt':<11} {'dev pass rate after generation 1..N (mean over seeds)':<60} {'all pass at':>12} {'tokens':>7}"
    )
    for mode, (curves, sizes) in results.items():
        mean = [statistics.fmean(c[g] for c in curves) for g in range(args.generations)]
        reached = [next((g + 1 for g, v in enumerate(c) if v >= 1.0), None) for c in curves]
        done = (
            "no"
            if any(r is None for r in reached)
            else f"gen {statistics.fmean(r for r in reached if r):.1f}"
        )
        line = " ".join(f"{v:.2f}" for v in mean)
        print(f"{mode:<11} {line:<60} {done:>12} {statistics.fmean(sizes) if sizes else 0:>7.0f}")
    inline, blind = (statistics.fmean(c[-1] for c in results[m][0]) for m in ("inline", "paths only"))
    print(f"final dev pass rate, inline / paths only: {inline:.2f} / {blind:.2f}")


if __name__ == "__main__":
    main()
