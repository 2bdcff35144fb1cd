"""What looking for hard links to the answer key costs at start, in a readable folder of many files.

A project whose ``runner.read_only`` and agent ``home_ro`` name a folder of ``--files`` files (default 100,000,
in 1,000 directories, on the key files' filesystem, one of them a plain copy of nothing), and the same project
without the folder. Each run times ``refuse_exposed_key`` — the check every ``assay init``, ``eval`` and
``evolve`` does before anything runs — in a fresh process, so no walk is remembered from an earlier one; the
figure is the difference of the medians (the folder's cost) beside both medians and their spread. The target:
at most 0.2 s for 100,000 files.

Run: python benchmarks/readable_walk.py [--files 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import describe

TARGET_S = 0.2
CHILD = """
import sys, time
from assay.cases import load_cases
from assay.config import load_config
from assay.evaluation.key_reach import refuse_exposed_key
config = load_config(sys.argv[1])
cases = load_cases([config.base_dir / f for f in config.cases.files], default_checks=list(config.checks))
started = time.perf_counter()
refuse_exposed_key(config, cases)
print(time.perf_counter() - started)
"""


def make_project(root: Path, folder: Path | None) -> Path:
    root.mkdir(parents=True)
    (root / "params.json").write_text('{"style": "terse"}\n')
    (root / "check.py").write_text("import sys; sys.exit(0)\n")
    (root / "key.json").write_text('{"answer": "amber kestrel"}\n')
    (root / "cases.yaml").write_text("cases:\n  - {id: a, input: x, checks: [{type: contains, value: ok}]}\n")
    read_only = f", read_only: [{folder}]" if folder else ""
    home_ro = (
        f"\n  proposer: {{type: agent, command: 'true', home_ro: [{folder}], allow_unsandboxed: true}}"
        if folder
        else ""
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: config, paths: [params.json]}\ncases: {files: [cases.yaml]}\n"
        f"runner: {{type: command, command: 'cat params.json'{read_only}}}\n"
        "checks:\n  - {type: script, value: 'python3 check.py key.json'}\n"
        f"evolve:{home_ro or ' {}'}\n"
    )
    return root / "assay.yaml"


def fill(folder: Path, files: int) -> None:
    per_dir = 100
    for d in range((files + per_dir - 1) // per_dir):
        where = folder / f"d{d // 100:03d}" / f"e{d:04d}"
        where.mkdir(parents=True)
        for f in range(min(per_dir, files - d * per_dir)):
            (where / f"f{f:03d}.txt").touch()


def timed(config: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(config)], capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-walk-") as tmp:
        folder = Path(tmp) / "readable"
        fill(folder, args.files)
        bare = make_project(Path(tmp) / "bare", None)
        walked = make_project(Path(tmp) / "walked", folder)
        pairs = [(timed(bare), timed(walked)) for _ in range(args.runs)]
    without = [a for a, _ in pairs]
    with_folder = [b for _, b in pairs]
    cost = statistics.median(with_folder) - statistics.median(without)
    print(describe())
    print(f"{args.files:,} files in the readable folder, {args.runs} runs, each in a fresh process")
    for name, values in (("without the folder", without), ("with the folder", with_folder)):
        print(
            f"  {name:20s} median {statistics.median(values):.3f} s"
            f"  (min {min(values):.3f}, max {max(values):.3f})"
        )
    verdict = "within" if cost <= TARGET_S else "ABOVE"
    print(f"  the folder's cost: {cost:.3f} s ({verdict} the {TARGET_S} s target)")
    if cost > TARGET_S:
        sys.exit(1)


if __name__ == "__main__":
    main()
