"""What does running cases on Ray cost, and what does it buy?

(a) Overhead: 2,000 short cases (a `command` runner that prints its input, three deterministic checks each,
    `runner.sandbox: none`), the Ray executor on a two-node loopback cluster against the local executor, same
    concurrency, in the same process: the ratio of wall times. Short cases measure assay's and Ray's fixed cost
    per case run (scheduling, pickling the case and its result, the driver writing the trace).
(b) Scaling: cases that sleep 1 s, with N = 1, 2, 4, 8 case runs in flight on two nodes of 4 slots each.
    Sleep, not CPU, so a two-core machine can show it: throughput should grow about linearly with N.

Run: python benchmarks/ray_overhead.py [--cases 2000] [--concurrency 4] [--sleep-cases 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.raycluster

import ray  # noqa: E402
from tests.raycluster import start_cluster  # noqa: E402

from assay.config import ExecutorConfig, load_config  # noqa: E402
from assay.evaluation.session import evaluate_project, select_cases  # noqa: E402


def make_project(directory: Path, n_cases: int, command: str, address: str) -> Path:
    with (directory / "cases.jsonl").open("w") as handle:
        for i in range(n_cases):
            case = {
                "id": f"case-{i:05d}",
                "input": f"case-{i} payload {i * 7 % 13}",
                "checks": [
                    {"type": "contains", "value": f"case-{i}"},
                    {"type": "regex", "value": r"^case-\d+ payload \d+$"},
                    {"type": "not_contains", "value": "error"},
                ],
            }
            handle.write(json.dumps(case) + "\n")
    (directory / "artifact.txt").write_text("unused\n")
    config = directory / "assay.yaml"
    config.write_text(
        "artifact: {kind: document, paths: [artifact.txt]}\n"
        "cases: {files: [cases.jsonl]}\n"
        f"runner: {{type: command, command: '{command}', timeout: 60, sandbox: none}}\n"
        "tiers: {static: false}\n"
        f"executor: {{type: ray, address: '{address}'}}\n"
    )
    return config


def timed_eval(config_path: Path, executor: str, concurrency: int) -> tuple[float, int]:
    """Wall seconds of one evaluation and the number of passing cases."""
    config = load_config(config_path)
    config.executor = ExecutorConfig(type=executor, address=config.executor.address)  # type: ignore[arg-type]
    selection = select_cases(config, "all")
    start = time.perf_counter()
    result = asyncio.run(evaluate_project(config, selection, concurrency=concurrency))
    return time.perf_counter() - start, result.passed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--sleep-cases", type=int, default=16, help="sleeping cases per run in (b)")
    args = parser.parse_args()

    cluster = start_cluster(head_cpus=4)
    try:
        cluster.add_node(cpus=4)
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
        with tempfile.TemporaryDirectory() as tmp:
            short = make_project(Path(tmp), args.cases, "printf %s {input}", cluster.address)
            timed_eval(short, "ray", args.concurrency)  # warm: workers started, project shipped
            local_s, local_passed = timed_eval(short, "local", args.concurrency)
            ray_s, ray_passed = timed_eval(short, "ray", args.concurrency)
            assert local_passed == ray_passed == args.cases, (local_passed, ray_passed)
            print(f"(a) {args.cases} short cases, concurrency {args.concurrency}")
            print(f"    local executor  {local_s:7.2f} s  {args.cases / local_s:7.1f} cases/s")
            print(f"    ray executor    {ray_s:7.2f} s  {args.cases / ray_s:7.1f} cases/s")
            print(
                f"    ratio ray/local {ray_s / local_s:7.2f}   ({(ray_s - local_s) / args.cases * 1e3:+.2f} ms per case)"
            )
        with tempfile.TemporaryDirectory() as tmp:
            sleepy = make_project(Path(tmp), args.sleep_cases, "sleep 1; printf %s {input}", cluster.address)
            timed_eval(sleepy, "ray", 8)  # warm
            print(f"(b) {args.sleep_cases} cases of 1 s sleep on two nodes of 4 slots")
            base = None
            for slots in (1, 2, 4, 8):
                seconds, passed = timed_eval(sleepy, "ray", slots)
                assert passed == args.sleep_cases
                rate = args.sleep_cases / seconds
                base = base or rate
                print(
                    f"    N={slots}  {seconds:6.2f} s  {rate:5.2f} cases/s  x{rate / base:4.2f} (ideal x{slots})"
                )
    finally:
        ray.shutdown()
        cluster.stop()


if __name__ == "__main__":
    main()
