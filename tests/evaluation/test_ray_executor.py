"""The Ray executor on a real two-node cluster on loopback (one cluster for the module): same verdicts as the
local executor, the executor suite (assay.testing.executors) passed, traces written by the driver, bounded tasks in flight, a worker node killed mid-run without a
case lost or counted twice, and a preflight that names what a worker lacks."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extras import need

need("ray")

from assay.config import ExecutorConfig, load_config  # noqa: E402
from assay.errors import ConfigError  # noqa: E402
from assay.evaluation.executor import EXECUTORS  # noqa: E402
from assay.evaluation.ray_executor import RayExecutor  # noqa: E402
from assay.evaluation.session import (  # noqa: E402
    build_evaluator,
    evaluate_project,
    make_executor,
    select_cases,
)
from assay.evaluation.traces import read_trace  # noqa: E402
from assay.testing.executors import check_executor  # noqa: E402
from tests.layers import e2e_fixture  # noqa: E402
from tests.raycluster import RayCluster, start_cluster  # noqa: E402

SLUGIFY = Path(__file__).parents[2] / "examples" / "slugify"
BINPACK = Path(__file__).parents[2] / "examples" / "binpack"


@pytest.fixture(scope="module")
@e2e_fixture("a Ray cluster")
def cluster() -> Iterator[RayCluster]:
    started = start_cluster(head_cpus=2)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def driver(cluster: RayCluster) -> Iterator[None]:
    """This process joins the cluster once for the in-process tests."""
    import ray

    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def slugify_copy(tmp_path: Path, address: str) -> Path:
    root = tmp_path / "slugify"
    shutil.copytree(SLUGIFY, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    config = root / "assay.yaml"
    config.write_text(
        config.read_text() + f"\nexecutor: {{type: ray, address: '{address}', max_retries: 3}}\n"
    )
    return root


def test_registered_by_name():
    assert EXECUTORS.get("ray") is RayExecutor


def test_unreachable_address_is_a_config_error(tmp_path):
    """Before the module's cluster is joined: an address nobody listens on fails at once, naming the field
    (Ray alone would keep retrying for minutes)."""
    import ray

    if ray.is_initialized():
        pytest.skip("this process already joined a Ray cluster")
    from tests.raycluster import free_port

    address = f"127.0.0.1:{free_port()}"
    root = slugify_copy(tmp_path, address)
    config = load_config(root / "assay.yaml")
    with pytest.raises(ConfigError) as caught:
        asyncio.run(evaluate_project(config, select_cases(config, "all"), eval_dir=tmp_path / "eval"))
    assert str(caught.value) == (
        f"{root / 'assay.yaml'}: executor: cannot connect to Ray at {address}: Connection refused"
    )
    assert not ray.is_initialized()


class _ScriptedRay:
    """Stands in for the ``ray`` module's init/shutdown only: each init raises the next scripted error."""

    def __init__(self, errors: list[Exception | None]) -> None:
        self.errors, self.inits, self.shutdowns = errors, 0, 0

    def init(self, **options: object) -> None:
        self.inits += 1
        error = self.errors.pop(0)
        if error is not None:
            raise error

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_client_server_that_fails_to_start_is_tried_again(monkeypatch):
    """Ray Client's per-driver server sometimes fails to start: the connection is tried again, up to three
    times; any other failure, or the third, is the one-line error."""
    from assay.evaluation import ray_executor

    monkeypatch.setattr(ray_executor, "CONNECT_BACKOFF_S", 0.0)
    failed = RuntimeError(f"{ray_executor.CLIENT_SERVER_FAILED}. See ray_client_server_23000.err")
    executor = RayExecutor(ExecutorConfig(type="ray", address="ray://127.0.0.1:1"))

    ray = _ScriptedRay([failed, failed, None])
    executor._init(ray, {})
    assert (ray.inits, ray.shutdowns) == (3, 2)

    ray = _ScriptedRay([failed, failed, failed])
    with pytest.raises(
        ConfigError, match=r"executor: cannot connect to Ray at ray://127\.0\.0\.1:1: Starting Ray"
    ):
        executor._init(ray, {})
    assert ray.inits == 3

    ray = _ScriptedRay([ConnectionError("refused")])
    with pytest.raises(ConfigError, match="refused"):
        executor._init(ray, {})
    assert (ray.inits, ray.shutdowns) == (1, 0)


@pytest.mark.e2e
def test_same_verdicts_as_local_and_traces_written_by_the_driver(cluster, driver, tmp_path):
    root = slugify_copy(tmp_path, cluster.address)
    config = load_config(root / "assay.yaml")
    selection = select_cases(config, "all")
    remote = asyncio.run(evaluate_project(config, selection, eval_dir=tmp_path / "ray-eval"))
    config.executor = ExecutorConfig(type="local")
    local = asyncio.run(evaluate_project(config, selection, eval_dir=tmp_path / "local-eval"))
    assert [(c.id, c.passed, c.score) for c in remote.cases] == [
        (c.id, c.passed, c.score) for c in local.cases
    ]
    assert remote.passed == 7 and remote.total == 12
    for case in remote.cases:
        log, _, offset = (case.trace_path or "").rpartition("#")
        assert Path(log) == tmp_path / "ray-eval" / "traces" / "traces.jsonl" and offset.isdigit()
        assert read_trace(case.trace_path or "").result.id == case.id
        assert case.output.meta["worker"]  # it ran in a Ray worker, which said so
    assert remote.sandbox == local.sandbox


@pytest.mark.e2e
def test_the_ray_executor_passes_the_executor_suite(cluster, driver, tmp_path):
    """:func:`assay.testing.executors.check_executor` on the executor ``executor: {type: ray}`` names, with an
    evaluator built from the slugify example's assay.yaml (the Ray executor rebuilds it on the workers)."""
    root = slugify_copy(tmp_path, cluster.address)
    config = load_config(root / "assay.yaml")
    selection = select_cases(config, "all")
    evaluator = build_evaluator(config, selection.cases)

    async def suite() -> None:
        try:
            await check_executor(
                lambda: make_executor(config, "ray"), evaluator=evaluator, cases=selection.cases, workdir=root
            )
        finally:
            await evaluator.aclose()

    asyncio.run(suite())
    assert isinstance(evaluator.executor, RayExecutor) and len(selection.cases) == 12


@pytest.mark.e2e
def test_tasks_in_flight_are_bounded_and_results_stream(cluster, driver, tmp_path):
    root = slugify_copy(tmp_path, cluster.address)
    stamp = root / "stamp.sh"
    # Each case records its start and end time; the edited runner is part of the shipped tree.
    stamp.write_text('s=$(date +%s.%N); sleep 0.3; e=$(date +%s.%N); echo "$s $e"\n')
    config_file = root / "assay.yaml"
    config_file.write_text(
        config_file.read_text().replace("python slugify.py {input}", "sh stamp.sh {input}")
    )
    config = load_config(config_file)
    selection = select_cases(config, "all")
    evaluator = build_evaluator(config, selection.cases, concurrency=2)
    seen: list[str] = []
    try:
        result = asyncio.run(evaluator.run(selection.cases, root, on_result=lambda r: seen.append(r.id)))
    finally:
        asyncio.run(evaluator.aclose())
    spans = sorted(tuple(map(float, c.output.text.split())) for c in result.cases)
    peak = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert peak <= 2
    assert sorted(seen) == sorted(c.id for c in result.cases) and len(seen) == 12


@pytest.mark.e2e
def test_preflight_names_a_missing_runner_command(cluster, driver, tmp_path):
    root = slugify_copy(tmp_path, cluster.address)
    config_file = root / "assay.yaml"
    config_file.write_text(
        config_file.read_text().replace("python slugify.py {input}", "no-such-program-xyz {input}")
    )
    config = load_config(config_file)
    selection = select_cases(config, "all")
    with pytest.raises(ConfigError) as caught:
        asyncio.run(evaluate_project(config, selection, eval_dir=tmp_path / "eval"))
    message = str(caught.value)
    assert "assay.yaml" in message and "executor" in message
    assert "lacks the runner's no-such-program-xyz" in message and "Ray workers are not ready" in message


@pytest.mark.e2e
def test_eval_cli_survives_a_worker_node_killed_mid_run(cluster, driver, tmp_path):
    """`assay eval --executor ray` on 200 cases; a second node is killed while it runs cases: every case ends
    with exactly one result, and the verdicts are the ones a healthy run gives."""
    root = tmp_path / "many"
    root.mkdir()
    (root / "echo.sh").write_text('sleep 0.1; printf "%s" "$1"\n')
    (root / "cases.yaml").write_text(
        "".join(
            f"- {{id: c{i:03d}, input: 'w{i}', checks: [{{type: equals, value: 'w{i}'}}]}}\n"
            for i in range(200)
        )
    )
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [echo.sh]}\ncases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'sh echo.sh {input}', timeout: 30}\n"
        f"executor: {{type: local, address: '{cluster.address}', max_retries: 3}}\nconcurrency: 6\n"
    )
    import ray

    before = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    doomed = cluster.add_node(cpus=2)
    deadline = time.monotonic() + 60
    while not (added := {n["NodeID"] for n in ray.nodes() if n["Alive"]} - before):
        assert time.monotonic() < deadline, "the second node never joined"
        time.sleep(0.2)
    env = {**cluster.env, "COLUMNS": "200"}
    run = subprocess.Popen(
        [sys.executable, "-m", "assay", "eval", "--executor", "ray", "--json", "-q"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    traces = root / ".assay" / "evals"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and traced(traces) < 30:
        time.sleep(0.1)
    assert run.poll() is None, run.communicate()
    cluster.kill(doomed)
    stdout, stderr = run.communicate(timeout=240)
    assert run.returncode == 0, stderr[-2000:]
    summary = json.loads(stdout)
    ids = [c["id"] for c in summary["cases"]]
    assert len(ids) == 200 and len(set(ids)) == 200
    assert summary["passed"] == 200
    nodes = [read_trace(c["trace"]).result.output.meta["ray_node"] for c in summary["cases"]]
    assert added & set(nodes)  # the killed node had run cases before it died
    assert set(nodes) <= before | added
    assert traced(traces) == 200


def traced(evals: Path) -> int:
    """How many lines (whole traces) the trace logs under ``evals`` hold."""
    return sum(log.read_bytes().count(b"\n") for log in evals.glob("*/traces/traces.jsonl"))


@pytest.mark.e2e
def test_a_case_whose_worker_always_dies_is_a_failed_case_with_evidence(cluster, driver, tmp_path):
    """An inline python check runs in the Ray worker process; on case ``die`` it ends that process, on every
    attempt: the case is recorded failed with the evidence, the other cases pass, each has one result."""
    root = tmp_path / "deadly"
    root.mkdir()
    (root / "cases.yaml").write_text(
        "".join(f"- {{id: ok{i}, input: 'w{i}'}}\n" for i in range(5)) + "- {id: die, input: die}\n"
    )
    (root / "notes.txt").write_text("an artifact\n")
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [notes.txt]}\ncases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'printf %s {input}', timeout: 30}\n"
        "checks: [{type: python, value: \"__import__('os')._exit(3) if output == 'die' else True\"}]\n"
        f"executor: {{type: ray, address: '{cluster.address}', max_retries: 1}}\n"
    )
    config = load_config(root / "assay.yaml")
    selection = select_cases(config, "all")
    result = asyncio.run(evaluate_project(config, selection, eval_dir=tmp_path / "eval"))
    by_id = {c.id: c for c in result.cases}
    assert sorted(by_id) == sorted(["die", *(f"ok{i}" for i in range(5))]) and result.total == 6
    assert all(by_id[f"ok{i}"].passed for i in range(5))
    lost = by_id["die"]
    assert not lost.passed and lost.score == 0.0
    assert lost.output.error is not None and lost.output.error.startswith("worker lost after 2 attempts: ")
    assert lost.checks[-1].type == "runner" and "worker lost" in lost.checks[-1].evidence
    assert read_trace(lost.trace_path or "").result.id == "die"


# Several candidates measured at once share the machine, so the gate's time rule is set out of reach.
PARALLEL = "  search: ranked\n  parallel_candidates: 2\n  gate_options: {cost_factor: 1000}\n"


@pytest.mark.e2e
@pytest.mark.parametrize("parallel", [1, 2], ids=["one-at-a-time", "parallel-candidates"])
def test_evolve_on_ray_keeps_and_discards_as_the_local_executor(cluster, tmp_path, parallel):
    """`assay evolve --executor ray` and the local executor make the same decisions with the same scores (the
    binpack example, offline mutations, 12 cases): candidates' worktrees reach the workers as trees. With
    ``evolve.parallel_candidates: 2`` two candidates are measured on the cluster at once and their decisions
    are still the local run's, in generation order."""
    env = {**cluster.env, "COLUMNS": "200"}

    def assay(root: Path, *args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "assay", *args],
            cwd=root,
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-2000:]

    first = tmp_path / "local"
    shutil.copytree(BINPACK, first, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    cases = first / "cases.yaml"
    cases.write_text("\n".join(cases.read_text().splitlines()[:12]) + "\n")
    config = first / "assay.yaml"
    config.write_text(
        config.read_text().replace("{vars.seed}", "{vars.seed} 60")
        + (PARALLEL if parallel > 1 else "")
        + f"\nexecutor: {{address: '{cluster.address}'}}\n"
    )
    assay(first, "init")
    shutil.copytree(first, tmp_path / "ray", symlinks=True)  # the same repository, split and baseline
    generations = 2 * parallel
    rows = {}
    for name, extra in (("local", ()), ("ray", ("--executor", "ray"))):
        root = tmp_path / name
        assay(root, "evolve", "-n", str(generations), *extra)
        (results,) = root.glob(".assay/runs/*/results.tsv")
        lines = results.read_text().splitlines()
        header = lines[0].split("\t")
        keep = [
            header.index(k) for k in ("generation", "decision", "dev_score", "holdout_score", "description")
        ]
        rows[name] = [[line.split("\t")[i] for i in keep] for line in lines[1:]]
        (log,) = root.glob(".assay/runs/*/traces/gen-001/traces.jsonl")
        meta = json.loads(log.read_text().splitlines()[0])["result"]["output"]["meta"]
        assert ("ray_node" in meta) == (name == "ray")
    assert len(rows["ray"]) == generations + 1 and rows["ray"] == rows["local"]
    assert [int(row[0]) for row in rows["ray"]] == list(range(generations + 1))


@pytest.mark.e2e
def test_llm_runner_and_judge_run_on_workers(cluster, driver, tmp_path):
    """The llm runner and a judged check answered from Ray workers (the scripted server on loopback): the
    same verdicts and evidence as locally, and the model was asked by the workers."""
    need("llm")
    from tests.fakes.llm_server import Rule, ScriptedLLMServer

    def judge(body: dict[str, object]) -> str:
        return "VERDICT: FAIL\nREASON: curt" if "Go away" in json.dumps(body) else "VERDICT: PASS\nREASON: ok"

    rules = [
        Rule(judge, system="VERDICT"),
        Rule("We are sorry your order is late.", user="late"),
        Rule("Go away.", user="rude"),
    ]
    with ScriptedLLMServer(rules=rules) as server:
        (tmp_path / "prompt.md").write_text("You are a support agent.\n")
        (tmp_path / "cases.yaml").write_text(
            "- {id: late, input: my order is late, checks: [{type: icontains, value: sorry},"
            " {type: llm_judge, value: polite}]}\n"
            "- {id: rude, input: a rude test, checks: [{type: llm_judge, value: polite}]}\n"
        )
        model = f"{{model: 'openai:test-model', base_url: '{server.openai_url}'}}"
        (tmp_path / "assay.yaml").write_text(
            "artifact: {kind: prompt, paths: [prompt.md]}\ncases: {files: [cases.yaml]}\n"
            f"runner: {{type: llm, model: 'openai:test-model', base_url: '{server.openai_url}'}}\n"
            f"judge: {model}\nexecutor: {{type: ray, address: '{cluster.address}'}}\ncache: false\n"
        )
        config = load_config(tmp_path / "assay.yaml")
        result = asyncio.run(evaluate_project(config, select_cases(config, "all"), eval_dir=tmp_path / "e"))
        asked = len(server.requests)
    by_id = {c.id: c for c in result.cases}
    assert by_id["late"].passed and not by_id["rude"].passed
    assert "curt" in by_id["rude"].checks[0].evidence
    assert all(c.output.meta.get("ray_node") for c in result.cases)
    assert asked >= 2 + 3  # two answers and the rude case's three judge votes at least


@pytest.mark.e2e
def test_eval_from_outside_the_cluster_through_ray_client(cluster, tmp_path):
    """`executor.address: ray://host:port` (Ray Client, a driver outside the cluster): `assay eval --executor
    ray` in its own process gives the local executor's verdicts, each case run on a worker of the cluster."""
    root = slugify_copy(tmp_path, cluster.client_address)
    env = {**cluster.env, "COLUMNS": "200"}

    def verdicts(*args: str) -> dict[str, tuple[bool, float]]:
        done = subprocess.run(
            [sys.executable, "-m", "assay", "eval", "--json", "-q", *args],
            cwd=root, capture_output=True, text=True, env=env, timeout=240,
        )  # fmt: skip
        if done.returncode != 1:  # 1: some cases fail (5 of 12 do, on any executor)
            logs = (
                p.read_text(errors="replace")[-1500:]
                for p in cluster.temp_dir.rglob("ray_client_server*.err")
            )
            pytest.fail(f"exit {done.returncode}: {done.stderr[-2000:]}{''.join(logs)}")
        summary = json.loads(done.stdout)
        if args:
            for case in summary["cases"]:
                meta = read_trace(case["trace"]).result.output.meta
                assert meta["ray_node"]
        return {c["id"]: (c["passed"], c["score"]) for c in summary["cases"]}

    remote = verdicts("--executor", "ray")
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("type: ray", "type: local"))
    assert remote == verdicts()
    assert sum(passed for passed, _ in remote.values()) == 7 and len(remote) == 12
