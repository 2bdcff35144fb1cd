"""Reports opened in a real headless Chromium: the DOM has the charts, nodes and rows the run holds, the page
makes no request and logs no error, and selecting a lineage node shows its diff. Screenshots are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.config import load_config
from assay.loop.engine import Evolution
from assay.report import render_run, run_report
from tests.fakes.llm_server import ScriptedLLMServer
from tests.loop.conftest import git
from tests.loop.test_noisy_loop import HARMFUL, noisy_reply, write_project

from .browser import Browser
from .conftest import assay

pytestmark = pytest.mark.e2e


def count(browser: Browser, selector: str) -> int:
    return int(browser.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))


def opened_cleanly(browser: Browser, path: Path, fragment: str = "") -> None:
    browser.console_errors.clear()
    browser.requests.clear()
    browser.open(path, fragment)
    assert browser.console_errors == []
    assert browser.requests == [path.resolve().as_uri()]  # the page itself, nothing else


def test_a_run_report_in_the_browser(binpack_run: Path, browser: Browser, artifacts: Path) -> None:
    report = run_report(load_config(binpack_run / "assay.yaml"), None)
    page = binpack_run / "report.html"
    page.write_text(render_run(report))
    opened_cleanly(browser, page)

    scored = [n for n in report.nodes if n.dev_score is not None or n.decision == "invalid"]
    assert count(browser, "svg.trajectory [data-node]") == len(scored)
    assert count(browser, "svg.lineage g.node") == len(report.nodes)
    assert count(browser, "svg.lineage line.edge") == len(report.nodes) - 1
    assert count(browser, "#candidates tr") == len(report.nodes) + 1
    assert count(browser, "#matrix tr") == len(report.kept[0].cases) + 1
    assert count(browser, "#matrix th a[data-node]") == len(report.kept)
    assert report.best is not None
    # The best is selected at first; its panel alone is shown.
    assert browser.evaluate("document.getElementById('selected-node').textContent") == report.best.id
    assert count(browser, "section.detail:not([hidden])") == 1

    changed = next(n for n in report.nodes if n.decision in ("keep", "discard") and n.diff)
    browser.click(f"svg.lineage g.node[data-node='{changed.id}']")
    assert browser.evaluate("location.hash") == f"#node={changed.id}"
    shown = browser.evaluate(
        "[...document.querySelectorAll('section.detail')].filter(s => !s.hidden).map(s => s.id)"
    )
    assert shown == [f"node-{changed.id}"]
    diff = browser.evaluate(f"document.querySelector('#node-{changed.id} .diff').innerText")
    added = [line.text for line in changed.diff if line.kind == "add"]
    assert added and all(line in diff for line in added)
    assert browser.evaluate(f"document.querySelector('#node-{changed.id} table.gate') !== null")
    assert browser.evaluate(
        f"document.querySelector('svg.lineage g.node[data-node=\"{changed.id}\"]').classList.contains('selected')"
    )
    # A point of the trajectory selects its candidate too; a deep link opens on it.
    other = report.nodes[0]
    browser.click(f"svg.trajectory [data-node='{other.id}']")
    assert browser.evaluate("document.getElementById('selected-node').textContent") == other.id
    opened_cleanly(browser, page, f"node={changed.id}")
    assert browser.evaluate(f"document.getElementById('node-{changed.id}').hidden") is False
    shot = browser.screenshot(artifacts / "run-report-binpack.png")
    assert shot.stat().st_size > 20_000


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_a_noisy_llm_run_with_a_tournament_in_the_browser(
    tmp_path: Path, llm_server: ScriptedLLMServer, browser: Browser, artifacts: Path
) -> None:
    llm_server.default = noisy_reply(seed=7)
    root = write_project(tmp_path / "p", llm_server.openai_url, f"{HARMFUL} Be brief.\n")
    config = root / "assay.yaml"
    config.write_text(
        config.read_text().replace("tournament: {enabled: false}", "tournament: {enabled: true}")
    )
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "with a tournament")
    run_sync(Evolution(load_config(config), max_generations=5).start())

    report = run_report(load_config(config), None)
    paired = [n for n in report.nodes if n.paired_test]
    assert paired and report.flaky and report.ratings and report.leaderboard
    assert report.spent.tokens > 0
    page = tmp_path / "noisy.html"
    done = assay("report", "-o", str(page), cwd=root)
    assert done.returncode == 0, done.stderr
    opened_cleanly(browser, page)
    assert count(browser, "svg.trajectory circle.paired") == len(paired)
    assert count(browser, "svg.ratings [data-node]") == len(report.ratings)
    assert count(browser, "#leaderboard tr") == len(report.leaderboard) + 1
    flagged = browser.evaluate(
        "[...document.querySelectorAll('#matrix th.case')].filter(th => th.innerText.includes('flaky'))"
        ".map(th => th.firstChild.textContent)"
    )
    assert sorted(flagged) == sorted(report.flaky)
    node = paired[0]
    browser.click(f"#candidates a[data-node='{node.id}']")
    text = browser.evaluate(f"document.getElementById('node-{node.id}').innerText")
    assert "paired test:" in text and "p_better" in text
    # Holdout cases appear as recorded, marked as never shown to the proposer.
    assert "never shown to the proposer" in browser.evaluate("document.body.innerText")
    assert browser.evaluate("document.querySelector('svg.spend-tokens polyline') !== null")
    browser.screenshot(artifacts / "run-report-noisy-llm.png")
