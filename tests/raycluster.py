"""A real Ray cluster on loopback for tests and benchmarks: a head node and worker nodes, each a ``ray start
--block`` process in its own session, so one node can be killed (the whole process group: raylet, object
store, workers) while the others run on. Every port is chosen free and the temp dir is private, so clusters of
concurrent test runs do not meet; only the processes started here are ever stopped. (Ray advertises the
machine's own address for its nodes; ``address`` is loopback, which reaches the same head.)"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).parent / "ray")
# Node death is noticed in seconds, not the default half minute, so a killed node's tasks are retried quickly.
FAST_FAILURE = {
    "RAY_health_check_initial_delay_ms": "500",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
    "RAY_USAGE_STATS_ENABLED": "0",
}


_handed_out: set[int] = set()  # ports given to a component by this process: never given twice
_worker_bases: set[int] = set()
WORKER_PORTS = 100


def free_port() -> int:
    """A loopback port that is free now and was not handed out before by this process (the kernel may offer a
    just-closed port again)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _worker_range() -> int:
    """The first of ``WORKER_PORTS`` ports for a node's workers, below the kernel's ephemeral range: ports from
    :func:`free_port` come from that range, so a component's port can never land among the workers' (Ray refuses
    to start when it does)."""
    top = max(_ephemeral_low(), 20000)  # a machine whose ephemeral range starts low still gets some ranges
    # From 10100: Ray checks a node's worker range against its client server's default port, 10001, even on a
    # node that runs no client server.
    bases = range(10100, top - WORKER_PORTS, WORKER_PORTS)
    rng = random.Random(os.getpid() ^ time.monotonic_ns())  # concurrent test runs draw different ranges
    while True:
        base = rng.choice(bases)
        if base not in _worker_bases:
            _worker_bases.add(base)
            return base


def _ports() -> list[str]:
    base = _worker_range()
    return [
        f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
        f"--runtime-env-agent-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        f"--min-worker-port={base}",
        f"--max-worker-port={base + WORKER_PORTS - 1}",
    ]


@dataclass
class RayCluster:
    """Nodes started by :func:`start_cluster`; ``address`` is what ``ray.init`` and ``executor.address`` take."""

    address: str
    temp_dir: Path
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    client_address: str = ""  # ray://host:port of the head's Ray Client server (the ray[client] extra)

    def add_node(self, cpus: int) -> subprocess.Popen[bytes]:
        """Start a worker node with ``cpus`` slots and wait until it says it runs."""
        node = _start(
            [f"--address={self.address}", f"--num-cpus={cpus}", *_ports()],
            self.temp_dir / f"node-{len(self.nodes)}.log",
            self.env,
        )
        self.nodes.append(node)
        return node

    def kill(self, node: subprocess.Popen[bytes]) -> None:
        """SIGKILL a node's whole process group: its raylet, object store and worker processes die at once."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)
        node.wait(timeout=30)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            self.kill(node)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _start(
    args: list[str], log: Path, env: dict[str, str], timeout: float = 120.0
) -> subprocess.Popen[bytes]:
    """``ray start --block`` in its own session, returned once its log says the node runs."""
    with log.open("wb") as sink:
        node = subprocess.Popen(
            [RAY, "start", "--block", *args], env=env, start_new_session=True, stdout=sink, stderr=sink
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "Ray runtime started" in log.read_text(errors="replace"):
            return node
        if node.poll() is not None:
            break
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)
    raise RuntimeError(f"ray start failed: {log.read_text(errors='replace')[-1500:]}")


def start_cluster(head_cpus: int = 2) -> RayCluster:
    """A head node on 127.0.0.1 with ``head_cpus`` slots (add workers with ``add_node``)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's socket paths have a limit
    port, client = free_port(), free_port()
    env = {k: v for k, v in {**os.environ, **FAST_FAILURE}.items() if k != "RAY_ADDRESS"}
    try:
        head = _start(
            ["--head", f"--port={port}", f"--num-cpus={head_cpus}", "--include-dashboard=false", f"--dashboard-port={free_port()}",
             f"--temp-dir={temp_dir}", "--disable-usage-stats", f"--ray-client-server-port={client}",
             *_ports()],
            temp_dir / "head.log",
            env,
        )  # fmt: skip
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    return RayCluster(f"127.0.0.1:{port}", temp_dir, [head], env, client_address=f"ray://127.0.0.1:{client}")
