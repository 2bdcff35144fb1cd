"""How much does assay add on top of the work an evaluation has to do anyway?

(a) 2,000 cases, a `command` runner that echoes its input, three deterministic checks per case (contains, regex,
    not_contains). assay (load config, load + split cases, L1 static tier, run, judge, write a trace per case and
    a summary) against a bare baseline that runs the same subprocesses at the same concurrency and applies the
    same contains/regex logic in a plain loop. Target: ratio <= 1.25, with `runner.sandbox: none` (the same plain
    subprocesses); the same run with each case in a bubblewrap jail is shown beside it.
    The child is chosen with --child: `echo` (the shell's builtin), `/bin/echo` (a near-free exec) or
    `python` (a Python interpreter per case).
(c) A concurrency sweep (1, 4, 16, 64) with the same child: cases/s for the bare loop and assay. assay's
    throughput must not fall as concurrency rises.
(d) An I/O-bound `llm` runner against a loopback OpenAI-compatible server (in a process of its own) that
    answers after 100 ms, at concurrency 32, against a bare loop of the same openai SDK calls at the same
    concurrency. Target: assay >= 0.9 x the bare loop.
(e) Start-up: `assay --version` and `assay --help` against `python -c "import typer, pydantic"` (target
    <= 2x), each run as a fresh process.
(g) Whole processes, as a user runs them: `assay eval -q` (default settings: the jail where bubblewrap works; and
    with `runner.sandbox: none`) against a bare Python script a user would write for the same work (a thread pool
    running the child, the same three checks), each a fresh process, median of interleaved repeats (targets
    <= 1.5x with the jail, <= 1.25x without), each both as a project's first `eval` (its `.assay/` removed
    before each run) and as a repeat (`.assay/` kept); the same for the llm runner's cases against a bare
    openai-SDK script (target >= 0.9x its throughput, start-up included); and how long after the command the
    first case starts (a one-case project whose child prints the time; target <= 0.5 s) and its first request
    reaches the server (an llm runner's one case; target <= 0.7 s), the first of each a first `eval`. Each
    figure is printed with its runs' spread (max - min, as a share of the median) and the machine
    (CPU model, kernel, bubblewrap) and its load. These children run without
    PYTHONDONTWRITEBYTECODE, whatever the calling shell sets: a user's install keeps its bytecode cache, and
    without it every start recompiles assay's source (about 80 ms more here).
(h) The L1 static tier's cache: a whole `assay eval -q` of an artifact of 200 Python files (each with a line
    detect-secrets looks at) and one case, with the per-file cache of L1 findings emptied before each run
    against the same command with it warm (an unchanged artifact, as at every `assay eval` after the first).
(f) Loading 50,000 cases from JSONL: time and peak memory of assay's loader against a bare `json.loads` per
    line of the same file (targets <= 3x the time, <= 2x the memory), each in a fresh process.

Run: python benchmarks/eval_overhead.py [--cases 2000] [--concurrency 4] [--repeats 3] [--child /bin/echo]
     [--only command,sweep,llm,startup,loading,whole,l1] [--whole-repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fakes.llm_server

from machine import describe  # noqa: E402

from assay.config import load_config  # noqa: E402
from assay.evaluation.session import evaluate_project, select_cases  # noqa: E402
from assay.evaluation.traces import read_trace  # noqa: E402
from assay.sandbox import bwrap_status  # noqa: E402

CHILDREN = {
    "echo": "echo {input}",
    "/bin/echo": "/bin/echo {input}",
    "python": "python3 -c 'import sys; print(sys.argv[1])' {input}",
}


def child_command(child: str, text: str) -> str:
    """The shell command line the bare loop runs for ``text``: what assay's template renders."""
    return CHILDREN[child].replace("{input}", shlex.quote(text))


def make_project(directory: Path, n_cases: int, runner_yaml: str, concurrency: int) -> Path:
    (directory / "artifact.txt").write_text("You are a helpful assistant. Answer briefly.\n")
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
    config = directory / "assay.yaml"
    config.write_text(
        "artifact: {kind: prompt, paths: [artifact.txt]}\n"
        "cases: {files: [cases.jsonl]}\n"
        f"runner: {runner_yaml}\n"
        f"concurrency: {concurrency}\n"
    )
    return config


async def run_assay(config_path: Path) -> tuple[float, float]:
    start = time.perf_counter()
    config = load_config(config_path)
    selection = select_cases(config, "all")
    result = await evaluate_project(config, selection, use_cache=False)
    return time.perf_counter() - start, result.pass_rate


async def run_baseline(
    n_cases: int, concurrency: int, pidfd: bool = False, child: str = "echo"
) -> tuple[float, float]:
    """The bare loop: asyncio subprocesses and the same checks, nothing else. ``pidfd`` (Python 3.11 only)
    swaps asyncio's default thread-per-child watcher for the pidfd watcher that 3.12+ uses by default."""
    if pidfd:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            watcher = asyncio.PidfdChildWatcher()
            asyncio.set_child_watcher(watcher)
            watcher.attach_loop(asyncio.get_running_loop())
    start = time.perf_counter()
    pattern = re.compile(r"^case-\d+ payload \d+$")
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> bool:
        text = f"case-{i} payload {i * 7 % 13}"
        async with semaphore:
            proc = await asyncio.create_subprocess_shell(
                child_command(child, text), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            stdout, _ = await proc.communicate()
        output = stdout.decode().rstrip("\n")
        return f"case-{i}" in output and bool(pattern.search(output)) and "error" not in output

    try:
        verdicts = await asyncio.gather(*(one(i) for i in range(n_cases)))
    finally:
        if pidfd:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                asyncio.set_child_watcher(None)
    return time.perf_counter() - start, sum(verdicts) / n_cases


def command_runner(child: str, sandbox: str) -> str:
    return f"{{type: command, command: {json.dumps(CHILDREN[child])}, timeout: 30, sandbox: {sandbox}}}"


def bench_command(n_cases: int, concurrency: int, repeats: int, child: str = "echo") -> float:
    variants = {"baseline (asyncio defaults)": lambda: run_baseline(n_cases, concurrency, child=child)}
    if sys.version_info < (3, 12) and hasattr(os, "pidfd_open"):
        variants["baseline (pidfd watcher)"] = lambda: run_baseline(
            n_cases, concurrency, pidfd=True, child=child
        )
    jailed = "assay, jailed (bubblewrap)"
    times: dict[str, list[float]] = {name: [] for name in [*variants, "assay", jailed]}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as tmp_jailed:
        # The target is assay's own overhead on the same plain subprocesses (sandbox: none); the jail's cost —
        # a bubblewrap sandbox per case — is shown beside it.
        config = make_project(Path(tmp), n_cases, command_runner(child, "none"), concurrency)
        config_jailed = make_project(Path(tmp_jailed), n_cases, command_runner(child, "strict"), concurrency)
        if not bwrap_status().available:
            del times[jailed]
        for _ in range(repeats):  # interleaved, so drifts in machine load hit every variant alike
            for name, variant in variants.items():
                seconds, rate = asyncio.run(variant())
                assert rate == 1.0, rate
                times[name].append(seconds)
            seconds, rate = asyncio.run(run_assay(config))
            assert rate == 1.0, rate
            times["assay"].append(seconds)
            if jailed in times:
                seconds, rate = asyncio.run(run_assay(config_jailed))
                assert rate == 1.0, rate
                times[jailed].append(seconds)
        disk = trace_disk_use(Path(tmp))
    print(
        f"(a) command runner `{CHILDREN[child]}`, {n_cases} cases x 3 checks, concurrency {concurrency},"
        f" {repeats} interleaved runs, load average {load_average()}"
    )
    ours = statistics.median(times["assay"])
    for name, values in times.items():
        median = statistics.median(values)
        line = (
            f"    {name:28s} median {median:5.2f}s  min {min(values):5.2f}s  {n_cases / median:5.0f} cases/s"
        )
        if name not in ("assay", jailed):
            line += f"   assay/this = {ours / median:.3f} (min/min {min(times['assay']) / min(values):.3f})"
        print(line)
    print(disk)
    ratio = ours / statistics.median(times["baseline (asyncio defaults)"])
    print(f"    target: assay <= 1.25 x baseline -> {ratio:.3f} {'OK' if ratio <= 1.25 else 'MISSED'}")
    if jailed in times:
        jail_ratio = statistics.median(times[jailed]) / ours
        print(
            f"    target: jailed <= 1.5 x assay (none) -> {jail_ratio:.3f} {'OK' if jail_ratio <= 1.5 else 'MISSED'}"
        )
    return ratio


def trace_disk_use(project: Path) -> str:
    """The trace log of the project's last evaluation per 1,000 cases: its bytes, the disk blocks it takes,
    and its bytes gzipped as ``traces.compress: true`` writes them (a gzip member per trace)."""
    folders = sorted((project / ".assay" / "evals").glob("*/traces"), key=lambda p: p.stat().st_mtime)
    log = folders[-1] / "traces.jsonl" if folders else None
    if log is None or not log.is_file():
        return "    traces: none written"
    lines = log.read_bytes().splitlines()
    per = 1000 / len(lines)
    size, blocks = log.stat().st_size, log.stat().st_blocks * 512
    packed = sum(len(gzip.compress(line + b"\n", compresslevel=6, mtime=0)) for line in lines)
    return (
        f"    traces (keep: all): {len(lines)} in one log, per 1,000 cases {size * per / 2**20:.2f} MB"
        f" ({blocks * per / 2**20:.2f} MB on disk); gzipped (traces.compress) {packed * per / 2**20:.2f} MB"
    )


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def bench_sweep(n_cases: int, repeats: int, child: str, levels: tuple[int, ...] = (1, 4, 16, 64)) -> None:
    """Cases/s for the bare loop and assay (sandbox: none) at each concurrency, interleaved."""
    print(
        f"(c) concurrency sweep, `{CHILDREN[child]}`, {n_cases} cases, {repeats} runs each, load {load_average()}"
    )
    print("    concurrency   bare cases/s (runs)        assay cases/s (runs)       assay/bare")
    for level in levels:
        bare: list[float] = []
        ours: list[float] = []
        with tempfile.TemporaryDirectory() as tmp:
            config = make_project(Path(tmp), n_cases, command_runner(child, "none"), level)
            for _ in range(repeats):
                seconds, rate = asyncio.run(run_baseline(n_cases, level, child=child))
                assert rate == 1.0, rate
                bare.append(n_cases / seconds)
                seconds, rate = asyncio.run(run_assay(config))
                assert rate == 1.0, rate
                ours.append(n_cases / seconds)
        print(
            f"    {level:11d}   {statistics.median(bare):6.0f} ({' '.join(f'{x:.0f}' for x in bare):14s})"
            f"   {statistics.median(ours):6.0f} ({' '.join(f'{x:.0f}' for x in ours):14s})"
            f"   {statistics.median(ours) / statistics.median(bare):.3f}"
        )


SERVER_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.fakes.llm_server import ScriptedLLMServer
server = ScriptedLLMServer(default="fine", delay=float(sys.argv[2])).start()
print(server.openai_url, flush=True)
sys.stdin.read()
server.stop()
"""


async def run_bare_sdk(url: str, n_cases: int, concurrency: int, prompt: str) -> float:
    """The bare loop: the same openai SDK call per case (the artifact as system prompt, the case as the user
    message) at the same concurrency, nothing else."""
    from openai import AsyncOpenAI

    start = time.perf_counter()
    client = AsyncOpenAI(base_url=url, api_key="bench-key", max_retries=0)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str:
        async with semaphore:
            response = await client.chat.completions.create(
                model="bench-model",
                messages=[
                    {"role": "system", "content": prompt},
                    {"role": "user", "content": f"case-{i} payload {i * 7 % 13}"},
                ],
                temperature=0,
            )
        return response.choices[0].message.content or ""

    await asyncio.gather(*(one(i) for i in range(n_cases)))
    await client.close()
    return time.perf_counter() - start


@contextlib.contextmanager
def llm_server(delay: float) -> Iterator[str]:
    """A scripted OpenAI-compatible server on loopback, in a process of its own, answering after ``delay``
    seconds; its URL."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT, str(ROOT), str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.communicate("")


def bench_llm(n_cases: int, concurrency: int, delay: float, repeats: int) -> float:
    with llm_server(delay) as url:
        os.environ.setdefault("OPENAI_API_KEY", "bench-key")
        bare: list[float] = []
        ours: list[float] = []
        with tempfile.TemporaryDirectory() as tmp:
            runner = f"{{type: llm, model: 'openai:bench-model', base_url: '{url}', prompt: artifact.txt}}"
            config = make_project(Path(tmp), n_cases, runner, concurrency)
            prompt = (Path(tmp) / "artifact.txt").read_text()
            for _ in range(repeats):
                bare.append(n_cases / asyncio.run(run_bare_sdk(url, n_cases, concurrency, prompt)))
                # The scripted answer does not satisfy the benchmark's checks; only throughput matters here.
                seconds, _ = asyncio.run(run_assay(config))
                ours.append(n_cases / seconds)
    ratio = statistics.median(ours) / statistics.median(bare)
    print(
        f"(d) llm runner, {n_cases} cases, server (own process) delay {delay * 1000:.0f} ms, concurrency"
        f" {concurrency}, {repeats} runs, load {load_average()}:"
    )
    print(
        f"    bare SDK loop  {statistics.median(bare):6.1f} cases/s  ({' '.join(f'{x:.1f}' for x in bare)})"
    )
    print(
        f"    assay          {statistics.median(ours):6.1f} cases/s  ({' '.join(f'{x:.1f}' for x in ours)})"
        f"   assay/bare = {ratio:.3f}  (target >= 0.9) {'OK' if ratio >= 0.9 else 'MISSED'}"
    )
    return ratio


def bench_startup(repeats: int) -> None:
    """Fresh processes, interleaved; the assay entry point is run as ``python -m assay``."""
    commands = {
        "import typer, pydantic": [sys.executable, "-c", "import typer, pydantic"],
        "assay --version": [sys.executable, "-m", "assay", "--version"],
        "assay --help": [sys.executable, "-m", "assay", "--help"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(3, repeats)):
        for name, argv in commands.items():
            times[name].append(_whole_seconds(argv, Path.cwd()))
    base = statistics.median(times["import typer, pydantic"])
    print(f"(e) start-up, {len(times['assay --help'])} runs each, load {load_average()}")
    for name, values in times.items():
        ratio = statistics.median(values) / base
        verdict = "" if name.startswith("import") else f"  (target <= 2) {'OK' if ratio <= 2 else 'MISSED'}"
        print(
            f"    {name:24s} median {statistics.median(values):5.3f}s  min {min(values):5.3f}s"
            f"  ratio {ratio:.2f}{verdict}"
        )


LOAD_SCRIPT = """
import json, sys, time
from pathlib import Path
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
path = Path(sys.argv[1])
if sys.argv[2] == "assay":
    from assay.cases import load_cases
before = rss("VmRSS:")
start = time.perf_counter()
if sys.argv[2] == "assay":
    cases = load_cases([path])
else:
    with path.open() as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "bytes": rss("VmHWM:") - before, "n": len(cases)}))
"""


def bench_loading(n_cases: int, repeats: int) -> None:
    """assay's case loader against a bare json.loads per line, each in a fresh process (peak RSS)."""
    with tempfile.TemporaryDirectory() as tmp:
        make_project(Path(tmp), n_cases, command_runner("echo", "none"), 4)
        path = Path(tmp) / "cases.jsonl"
        results: dict[str, list[dict[str, float]]] = {"bare json.loads": [], "assay load_cases": []}
        for _ in range(max(2, repeats)):
            for name, mode in (("bare json.loads", "bare"), ("assay load_cases", "assay")):
                done = subprocess.run(
                    [sys.executable, "-c", LOAD_SCRIPT, str(path), mode],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                results[name].append(json.loads(done.stdout))
        size = path.stat().st_size
    print(
        f"(f) loading {n_cases} cases ({size / 2**20:.1f} MB JSONL), {len(results['bare json.loads'])} runs, load {load_average()}"
    )
    bare_s = statistics.median(r["seconds"] for r in results["bare json.loads"])
    bare_b = statistics.median(r["bytes"] for r in results["bare json.loads"])
    for name, runs in results.items():
        seconds = [r["seconds"] for r in runs]
        memory = [r["bytes"] / 2**20 for r in runs]
        line = (
            f"    {name:18s} {statistics.median(seconds):6.2f}s ({' '.join(f'{x:.2f}' for x in seconds)})"
            f"  peak +{statistics.median(memory):6.1f} MB"
        )
        if name != "bare json.loads":
            time_ratio = statistics.median(seconds) / bare_s
            memory_ratio = statistics.median(r["bytes"] for r in runs) / bare_b
            line += (
                f"   time {time_ratio:.2f}x (target <= 3) {'OK' if time_ratio <= 3 else 'MISSED'},"
                f" memory {memory_ratio:.2f}x (target <= 2) {'OK' if memory_ratio <= 2 else 'MISSED'}"
            )
        print(line)


BARE_COMMAND_SCRIPT = """
import json, re, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
cases = [json.loads(line) for line in open(sys.argv[1])]
template = sys.argv[3]
def one(case):
    done = subprocess.run(template.replace("{input}", shlex.quote(case["input"])), shell=True, capture_output=True,
                          text=True)
    out = done.stdout.rstrip("\\n")
    ok = True
    for check in case["checks"]:
        if check["type"] == "contains":
            ok &= check["value"] in out
        elif check["type"] == "regex":
            ok &= re.search(check["value"], out) is not None
        else:
            ok &= check["value"] not in out
    return ok
with ThreadPoolExecutor(int(sys.argv[2])) as pool:
    passed = sum(pool.map(one, cases))
print(f"{passed}/{len(cases)} passed")
sys.exit(0 if passed == len(cases) else 1)
"""

BARE_SDK_SCRIPT = """
import asyncio, json, sys
from openai import AsyncOpenAI
async def main():
    cases = [json.loads(line) for line in open(sys.argv[1])]
    prompt = open(sys.argv[4]).read()
    client = AsyncOpenAI(base_url=sys.argv[3], api_key="bench-key", max_retries=0)
    gate = asyncio.Semaphore(int(sys.argv[2]))
    async def one(case):
        async with gate:
            reply = await client.chat.completions.create(model="bench-model", temperature=0, messages=[
                {"role": "system", "content": prompt}, {"role": "user", "content": case["input"]}])
        return reply.choices[0].message.content
    answers = await asyncio.gather(*(one(c) for c in cases))
    await client.close()
    print(len(answers), "answers")
asyncio.run(main())
"""


def _user_env() -> dict[str, str]:
    """The environment of a whole process: this one's, but with the bytecode cache a user's install has."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _whole_run(
    argv: list[str], cwd: Path, ok: tuple[int, ...] = (0,), fresh: bool = False
) -> tuple[float, float]:
    """One whole process: its wall seconds and the CPU seconds (user + system) it and its children used.
    ``fresh``: the project's ``.assay/`` is removed first, as at its first ``assay eval``."""
    if fresh:
        shutil.rmtree(cwd / ".assay", ignore_errors=True)
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_user_env()
    )
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}: {stderr.decode()[-500:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def _whole_seconds(argv: list[str], cwd: Path, ok: tuple[int, ...] = (0,), fresh: bool = False) -> float:
    return _whole_run(argv, cwd, ok, fresh)[0]


def spread(values: list[float]) -> str:
    """How far apart a figure's runs were: max - min, as a share of their median."""
    median = statistics.median(values)
    return f"spread {(max(values) - min(values)) / median * 100 if median else 0.0:.0f}%"


def _report_whole(title: str, times: dict[str, list[float]], base: str, targets: dict[str, float]) -> None:
    print(title)
    reference = statistics.median(times[base])
    for name, values in times.items():
        median = statistics.median(values)
        line = f"    {name:52s} median {median:6.2f}s  ({' '.join(f'{x:.2f}' for x in values)}, {spread(values)})"
        if name != base:
            ratio = median / reference
            line += f"   {ratio:.2f}x the bare script"
            if name in targets:
                line += f" (target <= {targets[name]}) {'OK' if ratio <= targets[name] else 'MISSED'}"
        print(line)


def _one_case_project(root: Path, runner: str, check: dict[str, object]) -> None:
    (root / "artifact.txt").write_text("x\n")
    (root / "cases.jsonl").write_text(json.dumps({"id": "now", "input": "x", "checks": [check]}) + "\n")
    (root / "assay.yaml").write_text(
        f"artifact: {{kind: prompt, paths: [artifact.txt]}}\ncases: {{files: [cases.jsonl]}}\nrunner: {runner}\n"
    )


def _eval_json(root: Path, *extra: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "eval", "-q", "--json", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env=_user_env(),
    )
    if not done.stdout:
        raise SystemExit(f"assay eval printed nothing: {done.stderr[-500:]}")
    return json.loads(done.stdout)


def first_case_delay(repeats: int) -> list[float]:
    """Seconds from starting ``assay eval`` to its one case's child reading the clock (command runner, default
    settings); the first run is the project's first ``eval`` (no ``.assay/``), the rest repeats."""
    delays = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _one_case_project(root, "{type: command, command: 'date +%s.%N'}", {"type": "regex", "value": r"^\d"})
        for _ in range(repeats):
            started = time.time()
            case = _eval_json(root)["cases"][0]  # type: ignore[index]
            delays.append(float(read_trace(case["trace"]).result.output.text) - started)
    return delays


def first_call_delay(repeats: int) -> list[float]:
    """Seconds from starting ``assay eval`` to its one case's request reaching a loopback OpenAI-compatible
    server (llm runner, default settings, no response cache); the first run is the project's first ``eval``."""
    from tests.fakes.llm_server import ScriptedLLMServer

    arrivals: list[float] = []

    def stamp(body: object) -> str:
        arrivals.append(time.time())
        return "fine"

    delays = []
    server = ScriptedLLMServer(default=stamp).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            runner = f"{{type: llm, model: 'openai:bench-model', base_url: '{server.openai_url}', prompt: artifact.txt}}"
            _one_case_project(root, runner, {"type": "contains", "value": "fine"})
            os.environ.setdefault("OPENAI_API_KEY", "bench-key")
            for _ in range(repeats):
                arrivals.clear()
                started = time.time()
                _eval_json(root, "--no-cache")
                delays.append(arrivals[0] - started)
    finally:
        server.stop()
    return delays


def _report_delay(what: str, delays: list[float], target: float) -> None:
    median = statistics.median(delays)
    print(
        f"    {what:30s} median {median:6.2f}s  ({' '.join(f'{x:.2f}' for x in delays)}, {spread(delays)})"
        f"   (target <= {target}) {'OK' if median <= target else 'MISSED'}; the first eval {delays[0]:.2f}s"
    )


def bench_whole(n_cases: int, llm_cases: int, concurrency: int, repeats: int, child: str) -> None:
    """(g): whole processes with default settings against bare scripts, interleaved."""
    assay = [sys.executable, "-m", "assay", "eval", "-q"]
    with tempfile.TemporaryDirectory() as tmp:
        default, none = Path(tmp) / "default", Path(tmp) / "none"
        default.mkdir()
        none.mkdir()
        runner = f"{{type: command, command: {json.dumps(CHILDREN[child])}, timeout: 30}}"
        make_project(default, n_cases, runner, concurrency)
        make_project(none, n_cases, command_runner(child, "none"), concurrency)
        (Path(tmp) / "bare.py").write_text(BARE_COMMAND_SCRIPT)
        bare = [sys.executable, str(Path(tmp) / "bare.py"), "cases.jsonl", str(concurrency), CHILDREN[child]]
        jail = "with the jail" if bwrap_status().available else "default (no bwrap here: unjailed)"
        first = "first eval (no .assay/)"
        # (argv, project, whether its .assay/ is removed before each run)
        runs = {
            "bare script (thread pool)": (bare, none, False),
            f"assay eval -q, {jail}, {first}": (assay, default, True),
            f"assay eval -q, {jail}, repeat": (assay, default, False),
            f"assay eval -q, sandbox: none, {first}": (assay, none, True),
            "assay eval -q, sandbox: none, repeat": (assay, none, False),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repeats):
            for name, (argv, cwd, fresh) in runs.items():
                times[name].append(_whole_seconds(argv, cwd, fresh=fresh))
    targets = {name: 1.5 if jail in name else 1.25 for name in runs if name.startswith("assay")}
    _report_whole(
        f"(g) whole processes, `{CHILDREN[child]}`, {n_cases} cases x 3 checks, concurrency {concurrency},"
        f" {repeats} interleaved runs, load {load_average()}",
        times,
        "bare script (thread pool)",
        targets,
    )
    _report_delay("first case starts after", first_case_delay(repeats), 0.5)
    _report_delay("first llm request after", first_call_delay(repeats), 0.7)
    with llm_server(0.1) as url, tempfile.TemporaryDirectory() as tmp:
        runner = f"{{type: llm, model: 'openai:bench-model', base_url: '{url}', prompt: artifact.txt}}"
        # Two sizes: the CPU per call is the slope between them, start-up left out.
        sizes = {"small": max(1, llm_cases // 10), "large": llm_cases}
        for size, count in sizes.items():
            (Path(tmp) / size).mkdir()
            make_project(Path(tmp) / size, count, runner, 32)
            (Path(tmp) / size / "bare.py").write_text(BARE_SDK_SCRIPT)
        sdk = [sys.executable, "bare.py", "cases.jsonl", "32", url, "artifact.txt"]
        os.environ.setdefault("OPENAI_API_KEY", "bench-key")
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(repeats):
            for size in sizes:
                root = Path(tmp) / size
                runs.setdefault(("bare", size), []).append(_whole_run(sdk, root))
                # The scripted answer does not pass the checks: exit 1 is expected, only time matters.
                # --no-cache: a repeat would otherwise be answered from the response cache, not the server.
                runs.setdefault(("assay", size), []).append(
                    _whole_run([*assay, "--no-cache"], root, ok=(0, 1))
                )

    def median(who: str, size: str, which: int) -> float:
        return statistics.median(run[which] for run in runs[(who, size)])

    bare_rate = llm_cases / median("bare", "large", 0)
    ours_rate = llm_cases / median("assay", "large", 0)
    walls = {who: [run[0] for run in runs[(who, "large")]] for who in ("bare", "assay")}
    calls = sizes["large"] - sizes["small"]
    per_call = {
        who: (median(who, "large", 1) - median(who, "small", 1)) / calls * 1000 for who in ("bare", "assay")
    }
    extra = per_call["assay"] - per_call["bare"]
    print(
        f"    llm runner, {llm_cases} cases, 100 ms server, concurrency 32: bare {bare_rate:.0f} cases/s"
        f" ({spread(walls['bare'])}), assay {ours_rate:.0f} cases/s ({spread(walls['assay'])})"
        f" = {ours_rate / bare_rate:.2f}x (target >= 0.9) {'OK' if ours_rate / bare_rate >= 0.9 else 'MISSED'};"
        f" load {load_average()}"
    )
    print(
        f"    CPU per call (slope {sizes['small']} -> {sizes['large']} cases): bare SDK {per_call['bare']:.2f} ms,"
        f" assay {per_call['assay']:.2f} ms: {extra:.2f} ms beyond the SDK's (target <= 0.5)"
        f" {'OK' if extra <= 0.5 else 'MISSED'}"
    )


def bench_l1(repeats: int, n_files: int = 200) -> None:
    """(h): a whole ``assay eval`` of an artifact of ``n_files`` Python files and one case, its L1 scan with an
    empty cache (deleted before each run) against a warm one, interleaved."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pkg").mkdir()
        for i in range(n_files):
            body = "".join(
                f"def f{j}(x):\n    return x * {j} + {i}  # build 7f3a{i:04d}b9\n" for j in range(40)
            )
            (root / "pkg" / f"m{i:03d}.py").write_text(body)
        (root / "cases.jsonl").write_text(
            json.dumps({"id": "one", "input": "x", "checks": [{"type": "regex", "value": ".*"}]}) + "\n"
        )
        (root / "assay.yaml").write_text(
            "artifact: {kind: code, paths: ['pkg/*.py']}\ncases: {files: [cases.jsonl]}\n"
            "runner: {type: command, command: 'true'}\n"
        )
        cache = root / ".assay" / "cache" / "static"
        argv = [sys.executable, "-m", "assay", "eval", "-q"]
        _whole_seconds(argv, root)  # fills the cache
        times: dict[str, list[float]] = {"warm L1 cache": [], "empty L1 cache": []}
        for _ in range(repeats):
            times["warm L1 cache"].append(_whole_seconds(argv, root))
            shutil.rmtree(cache)
            times["empty L1 cache"].append(_whole_seconds(argv, root))
    cold, warm = (statistics.median(times[k]) for k in ("empty L1 cache", "warm L1 cache"))
    print(
        f"(h) whole `assay eval -q`, an artifact of {n_files} Python files, one case, {repeats} interleaved runs:"
    )
    for name, values in times.items():
        print(
            f"    {name:15s} median {statistics.median(values):6.2f}s  ({' '.join(f'{x:.2f}' for x in values)})"
        )
    print(f"    the warm cache saves {cold - warm:.2f}s a run ({warm / cold:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", choices=sorted(CHILDREN), default="/bin/echo")
    parser.add_argument(
        "--whole-repeats", type=int, default=5, help="Interleaved repeats of each whole process in (g)."
    )
    parser.add_argument("--levels", default="1,4,16,64", help="Concurrency levels of the sweep.")
    parser.add_argument("--llm-cases", type=int, default=640)
    parser.add_argument("--load-cases", type=int, default=50_000)
    parser.add_argument(
        "--only", default="command,sweep,llm,startup,loading,whole,l1", help="Comma-separated parts."
    )
    args = parser.parse_args()
    parts = set(args.only.split(","))
    print(f"machine: {describe()}; load {load_average()}")
    if "command" in parts:
        bench_command(args.cases, args.concurrency, args.repeats, args.child)
    if "sweep" in parts:
        bench_sweep(args.cases, args.repeats, args.child, tuple(int(x) for x in args.levels.split(",")))
    if "llm" in parts:
        bench_llm(args.llm_cases, 32, 0.1, args.repeats)
    if "startup" in parts:
        bench_startup(args.repeats)
    if "loading" in parts:
        bench_loading(args.load_cases, args.repeats)
    if "whole" in parts:
        bench_whole(args.cases, args.llm_cases, args.concurrency, args.whole_repeats, args.child)
    if "l1" in parts:
        bench_l1(args.repeats)


if __name__ == "__main__":
    main()
