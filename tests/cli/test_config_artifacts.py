"""A config artifact evolved with the defaults and adopted keeps the user's file: ``git diff`` shows only changed
values — comments on most lines, anchors and an alias with a merge key (YAML), inline comments and odd spacing
(TOML), four-space indentation and escapes (JSON) all stay as written. Through the CLI, as a user runs it."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import assay, git

pytestmark = pytest.mark.e2e

YAML = """\
# Calibration of the three-sensor reading: every line says why.
defaults: &defaults   # shared by both profiles
  scale: 1.0          # multiplies the weighted sum
  offset: 0.0         # added after scaling

strict:
  <<: *defaults       # start from the defaults
  label: 'strict'     # shown in logs

# Weights of the three sensors, in order.
weights:
  - 1.0   # the front sensor
  - 1.0   # the middle one
  - 1.0   # the back one
"""

TOML = """\
# Calibration of the three-sensor reading.
label = 'strict'        # shown in logs

[calibration]
scale = 1.0             # multiplies the weighted sum
offset = 0.0            # added after scaling
weights = [ 1.0, 1.0 ,1.0 ]   # front, middle, back
"""

JSON = """{
    "label": "strict \\u2014 calibrated",
    "calibration": {
        "scale": 1.0,
        "offset": 0.0,
        "weights": [1.0,   1.0, 1.0]
    }
}
"""

READERS = {
    "yaml": "import yaml\nconf = yaml.safe_load(open('calibration.yaml'))\n"
    "scale, offset, w = conf['strict']['scale'], conf['strict']['offset'], conf['weights']\n",
    "toml": "import tomllib\nconf = tomllib.load(open('calibration.toml', 'rb'))['calibration']\n"
    "scale, offset, w = conf['scale'], conf['offset'], conf['weights']\n",
    "json": "import json\nconf = json.load(open('calibration.json'))['calibration']\n"
    "scale, offset, w = conf['scale'], conf['offset'], conf['weights']\n",
}
TEXTS = {"yaml": YAML, "toml": TOML, "json": JSON}


def project(root: Path, kind: str) -> Path:
    name = f"calibration.{kind}"
    rng = random.Random(7)
    cases = []
    for i in range(20):
        a, b, c = (round(rng.uniform(0, 10), 2) for _ in range(3))
        want = 1.3 * (0.5 * a + 2.0 * b + 1.0 * c) - 0.4
        cases.append(f"  - {{id: r{i:02d}, vars: {{a: {a}, b: {b}, c: {c}, want: {want:.4f}}}}}\n")
    files = {
        name: TEXTS[kind],
        "read.py": READERS[kind]
        + "import sys\na, b, c = (float(x) for x in sys.argv[1:4])\n"
        + "raw = sum(weight * x for weight, x in zip(w, (a, b, c)))\nprint(round(scale * raw + offset, 6))\n",
        "score.py": "def check(output, context):\n"
        "    err = abs(float(output) - float(context['vars']['want']))\n"
        "    return {'pass': err < 0.05, 'score': 1 / (1 + err)}\n",
        "cases.yaml": "cases:\n" + "".join(cases),
        "assay.yaml": (
            f"artifact: {{kind: config, paths: [{name}], forbid: [read.py, score.py, cases.yaml, assay.yaml]}}\n"
            "cases: {files: [cases.yaml]}\n"
            "runner: {type: command, command: 'python3 read.py {vars.a} {vars.b} {vars.c}', timeout: 10}\n"
            "checks:\n  - {type: python, value: 'score.py:check'}\n"
        ),
        ".gitignore": ".assay/\n__pycache__/\n",
    }
    root.mkdir()
    for path, text in files.items():
        (root / path).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "start")
    return root


def shape(line: str) -> str:
    """A line with its numbers taken out: what an edit of values leaves as it was."""
    return re.sub(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "#", line)


@pytest.mark.parametrize("kind", ["yaml", "toml", "json"])
def test_an_evolved_and_adopted_config_keeps_the_users_file(tmp_path: Path, kind: str) -> None:
    root = project(tmp_path / kind, kind)
    start = git(root, "rev-parse", "HEAD")
    assert assay("init", cwd=root).returncode == 0
    evolve = assay("evolve", "-n", "12", cwd=root)
    assert evolve.returncode == 0, evolve.stdout + evolve.stderr
    assert "result: gain" in evolve.stdout, evolve.stdout
    adopt = assay("adopt", "best", "--force", cwd=root)
    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    name = f"calibration.{kind}"
    before, after = TEXTS[kind], (root / name).read_text()
    assert after != before
    diff = subprocess.run(
        ["git", "diff", "--unified=0", start, "HEAD", "--", name], cwd=root, capture_output=True, text=True
    ).stdout
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed and added
    # Every line the candidates changed is a line of the user's file with other values (a list item removed or
    # duplicated is one of its lines, gone or twice); no comment, quote or anchor was rewritten.
    shapes = {shape(line) for line in before.splitlines()}
    assert all(shape(line) in shapes for line in added), diff
    comment_lines = [line for line in before.splitlines() if line.lstrip().startswith("#")]
    assert all(line in after.splitlines() for line in comment_lines)
    if kind == "yaml":
        assert "defaults: &defaults   # shared by both profiles" in after
        assert "  <<: *defaults       # start from the defaults" in after
        assert "  label: 'strict'     # shown in logs" in after
    if kind == "json":
        assert '"label": "strict \\u2014 calibrated",' in after and after.endswith("}\n")


@pytest.mark.parametrize("kind", ["yaml", "toml"])
def test_a_file_written_on_windows_keeps_its_byte_order_mark_and_crlf_line_ends(
    tmp_path: Path, kind: str
) -> None:
    root = project(tmp_path / kind, kind)
    name = f"calibration.{kind}"
    windows = TEXTS[kind].replace("\n", "\r\n").encode()
    if kind == "yaml":  # tomllib refuses a byte-order mark; a TOML file from Windows has CRLF ends alone
        windows = b"\xef\xbb\xbf" + windows
    (root / name).write_bytes(windows)
    git(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qam", "as Notepad saves it")
    assert assay("init", cwd=root).returncode == 0
    evolve = assay("evolve", "-n", "6", cwd=root)
    assert evolve.returncode == 0 and "result: gain" in evolve.stdout, evolve.stdout + evolve.stderr
    assert assay("adopt", "best", "--force", cwd=root).returncode == 0
    after = (root / name).read_bytes()
    assert after != windows
    assert after.startswith(b"\xef\xbb\xbf") == windows.startswith(b"\xef\xbb\xbf")
    assert after.count(b"\r\n") == after.count(b"\n") == windows.count(b"\n")
    before_shapes = {shape(line) for line in windows.decode().splitlines()}
    assert all(shape(line) in before_shapes for line in after.decode().splitlines())
