"""``assay eval --html``: every case with its input, output and checks, recorded text escaped (never run as
markup), a failing-only filter, another evaluation or run side by side, and a shared version without check
values, holdout cases or secrets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .browser import Browser
from .conftest import assay

# The fast layer runs these without the jail (as on a machine without bubblewrap): the jail is not what they
# test; tests/sandbox and the e2e attack tests prove it.
pytestmark = pytest.mark.usefixtures("no_bwrap")

SLUGIFY = Path(__file__).parents[2] / "examples" / "slugify"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"console.error('ran')\">"
AWS_KEY = "AKIAZ3MSJV2YNCHQXRT7"
ANSWER = "ZEBRA-7731"


@pytest.fixture
def slugify(tmp_path: Path) -> Path:
    root = tmp_path / "slugify"
    shutil.copytree(SLUGIFY, root, ignore=shutil.ignore_patterns(".assay"))
    with (root / "cases.yaml").open("a") as cases:
        cases.write(f"  - id: hostile\n    input: {json.dumps(HOSTILE)}\n")
        cases.write("    checks:\n      - {type: equals, value: never}\n")
    return root


def visible_rows(browser: Browser) -> list[str]:
    return list(
        browser.evaluate(
            "[...document.querySelectorAll('#cases tr[data-case]')]"
            ".filter(r => getComputedStyle(r).display !== 'none').map(r => r.dataset.case)"
        )
    )


@pytest.mark.e2e
def test_an_eval_report_escapes_outputs_filters_and_compares(
    slugify: Path, browser: Browser, artifacts: Path
) -> None:
    first = assay("eval", "--json", cwd=slugify)
    summary = json.loads(first.stdout)
    before = Path(summary["trace_dir"]).parent
    script = slugify / "slugify.py"
    script.write_text(script.read_text() + "\n# a second version, which behaves as the first\n")

    done = assay("eval", "--html", "out/eval.html", "--compare", str(before), cwd=slugify)
    assert done.returncode == 1, done.stderr  # some cases fail, as without --html
    page = slugify / "out" / "eval.html"
    browser.console_errors.clear()
    browser.open(page)
    assert browser.console_errors == [] and browser.requests == [page.resolve().as_uri()]
    assert browser.evaluate("document.title").startswith("assay eval of")
    # The hostile input and its output are shown as text: no script ran, no image was fetched.
    row = browser.evaluate("document.querySelector('tr[data-case=\"hostile\"]').innerText")
    assert HOSTILE in row
    assert browser.evaluate("document.querySelectorAll('#cases script, #cases img').length") == 0

    cases = {c["id"]: c for c in summary["cases"]}
    assert sorted(visible_rows(browser)) == sorted(cases)
    browser.click("#failing-only")
    failing = sorted(cid for cid, c in cases.items() if not c["passed"])
    assert sorted(visible_rows(browser)) == failing
    # Side by side: the earlier evaluation's verdict and output for every case.
    other = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('#cases tr[data-case]')]"
        ".map(r => [r.dataset.case, r.querySelector('td.other').innerText]))"
    )
    for cid, case in cases.items():
        assert ("pass" if case["passed"] else "fail") in other[cid]
    evidence = browser.evaluate("document.querySelector('tr[data-case=\"accents\"]').innerText")
    assert "creme-brulee-recipe" in evidence  # the check's evidence, as recorded
    browser.screenshot(artifacts / "eval-report-slugify.png")


def write_echo_project(root: Path) -> Path:
    root.mkdir()
    (root / "note.txt").write_text("an artifact\n")
    cases = [
        f"  - {{id: c{i:02d}, input: 'answer {i} key {AWS_KEY}', checks: [{{type: contains, value: 'ANSWER-{i}'}}]}}\n"
        for i in range(10)
    ]
    cases.append(
        f"  - {{id: leak, input: 'the code is {ANSWER} and {AWS_KEY}', checks: [{{type: contains, value: '{ANSWER}'}}]}}\n"
    )
    (root / "cases.yaml").write_text("cases:\n" + "".join(cases))
    (root / "assay.yaml").write_text(
        "artifact: {kind: document, paths: [note.txt]}\n"
        "cases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'printf \"%s\\n\" {input}', timeout: 10}\n"
    )
    return root


def test_a_shared_eval_report_has_no_check_values_holdout_cases_or_secrets(tmp_path: Path) -> None:
    root = write_echo_project(tmp_path / "echo")
    full = assay("eval", "--json", "--html", "full.html", cwd=root)
    cases = {c["id"]: c for c in json.loads(full.stdout)["cases"]}
    assert cases["leak"]["passed"] is True
    hidden = [cid for cid, c in cases.items() if c["split"] != "dev"]
    assert hidden
    html = (root / "full.html").read_text()
    assert ANSWER in html and AWS_KEY in html and "ANSWER-3" in html
    assert all(f'data-case="{cid}"' in html for cid in cases)

    shared = assay("eval", "--html", "shared.html", "--share", cwd=root)
    assert shared.returncode == 1, shared.stderr
    html = (root / "shared.html").read_text()
    assert ANSWER not in html and AWS_KEY not in html and "ANSWER-" not in html
    assert all(f'data-case="{cid}"' not in html for cid in hidden)
    assert all(f'data-case="{cid}"' in html for cid, c in cases.items() if c["split"] == "dev")
    assert "line withheld: it looks like a secret" in html


def test_html_options_need_html(slugify: Path) -> None:
    done = assay("eval", "--share", cwd=slugify)
    assert done.returncode == 2 and "needs --html" in done.stderr
    bad = assay("eval", "--html", "x.html", "--compare", "nope", cwd=slugify)
    assert bad.returncode == 2 and "no runs yet" in bad.stderr
