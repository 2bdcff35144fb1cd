"""One word per idea: a mutation layer is shown by its name (surface, core, architecture), never as L1–L3,
which name the verification tiers; the config takes names or the numbers runs store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.cli import runs
from assay.cli.console import LazyConsole
from assay.cli.live import RunLimits, status_lines
from assay.config import load_config
from assay.history.records import RunRecord
from assay.history.runfiles import RunFiles
from assay.history.store import RunStore
from assay.layer_names import LAYER_NAMES, layer_name, layer_number
from assay.loop.announce import generation_line, plan_text
from assay.loop.events import Decided, Event, LayerPromoted
from assay.loop.layers import LayerTracker
from assay.loop.runlog import RunLog
from assay.loop.state import LoopState, fold
from assay.presets import resolve
from assay.proposers.prompt import LAYERS
from assay.report import render_run
from assay.report.run import load_run_report
from tests.loop.test_state import baseline_events, generation

# Where a tier may be named in what a run shows: the report's legend and titles, the plan's tiers line.
TIER_MENTIONS = re.compile(
    r"holdout \(L3\)|static findings \(L1\)|L3 on [^:<]+: holdout|tiers: L1 static \(structure, syntax, security\)"
    r" -> L2 dev cases -> L3 holdout"
)
TIER_TOKEN = re.compile(r"\bL[123]\b")


def tier_tokens(text: str) -> list[str]:
    """Each L1/L2/L3 in ``text`` that is not one of the tier mentions, with its surroundings."""
    rest = TIER_MENTIONS.sub("", text)
    return [rest[max(0, m.start() - 30) : m.end() + 30] for m in TIER_TOKEN.finditer(rest)]


def test_each_layer_has_one_name() -> None:
    assert [layer_name(n) for n in (1, 2, 3)] == ["surface", "core", "architecture"]
    assert layer_name(7) == "layer 7"  # a number no name covers is still shown, as a layer
    assert sorted(LAYER_NAMES.values()) == sorted(set(LAYER_NAMES.values()))
    # The proposer prompt names the layer too; its words are unchanged (they are part of the cache keys).
    assert LAYERS[2].startswith("Layer 2 (core): ")


@pytest.mark.parametrize(
    ("given", "number"), [("surface", 1), ("Core", 2), (" architecture ", 3), (1, 1), (3, 3)]
)
def test_a_layer_is_read_from_its_name_or_its_number(given: object, number: int) -> None:
    assert layer_number(given) == number


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("cor", "unknown layer 'cor'; did you mean 'core'?"),
        ("2", "'2' is text: write the layer as its number (2) or its name"),
        ("architectur", "unknown layer 'architectur'; did you mean 'architecture'?"),
        ("deep", "unknown layer 'deep'; expected surface, core or architecture (or their numbers 1, 2 or 3)"),
        ("L2", "'L2' names a verification tier, not a layer; did you mean 'core'?"),
        (4, "unknown layer 4; expected surface, core or architecture"),
        (True, "unknown layer True"),
    ],
)
def test_an_unknown_layer_names_the_closest(given: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        layer_number(given)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def recorded_events() -> list[Event]:
    """A run that moved through all three layers: a discard at surface, a keep at core, a discard at
    architecture, the last layer exhausted."""
    return [
        *baseline_events(),
        *generation(1, "discard", ("a",), layer=1),
        LayerPromoted(generation=1, layer=2, exhausted=False),
        *generation(2, "keep", ("a", "b"), layer=2),
        LayerPromoted(generation=2, layer=3, exhausted=False),
        *generation(3, "discard", ("a",), parent="c2", layer=3),
        LayerPromoted(generation=3, layer=3, exhausted=True),
    ]


def record_run(root: Path) -> tuple[Path, RunRecord]:
    """The events above logged as a run logs them (events, results.tsv, the run store), beside an assay.yaml
    that lists its layers by name."""
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [a.py]}\ncases: {files: cases.yaml}\n"
        "runner: {type: command, command: 'python a.py', timeout: 5}\n"
        "checks:\n  - {type: contains, value: x}\nevolve: {layers: [surface, core, architecture]}\n"
    )
    config = load_config(root / "assay.yaml")
    store = RunStore(f"sqlite:///{root / '.assay' / 'assay.db'}")
    run = RunRecord(run_id="r", branch="assay/r", base_commit="c0", config=config.model_dump(mode="json"))
    store.create_run(run)
    log = RunLog(RunFiles(root / ".assay" / "runs" / "r"), store, "r")  # the helpers' records are of run "r"
    for event in recorded_events():
        log.append(event)
    return root / "assay.yaml", run


def test_nothing_a_recorded_run_shows_writes_a_layer_as_a_tier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config_path, run = record_run(tmp_path)
    config = load_config(config_path)
    assert config.evolve.layers == [1, 2, 3]
    events = recorded_events()
    decided = [e.record for e in events if isinstance(e, Decided)]

    lines = [generation_line(r) for r in decided]
    assert [line.split()[2] for line in lines] == ["surface", "surface", "core", "architecture"]
    assert len({line.index(r.decision, 8) for line, r in zip(lines, decided, strict=True)}) == 1  # a column

    plan = plan_text(run, config, resolve(config.evolve), {"dev": 4, "holdout": 1, "regression": 0}, 10)
    assert "layers surface -> core -> architecture, 3 discards in a row" in plan

    state = fold(LoopState.new(LayerTracker(layers=[1, 2, 3], discards_per_layer=1)), events[:-1])
    live = dict(status_lines(state.view(), RunLimits(10, None, None, None, None), 5.0))
    assert live["layer"] == "architecture"

    monkeypatch.setattr(runs, "out", LazyConsole())
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    runs.log_command(config_path, None, as_json=False)
    runs.status_command(config_path)
    shown = capsys.readouterr().out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in shown.splitlines() if "cand-000" in line]
    assert [row[2] for row in rows[:4]] == ["surface", "surface", "core", "architecture"]

    report = load_run_report(run, tmp_path / ".assay" / "runs" / "r", config)
    html = render_run(report)
    assert "· core layer ·" in html and "<td>architecture</td>" in html
    assert "→ core" in html and "→ architecture" in html and "layers exhausted" in html

    for text in (*lines, plan, *live.values(), shown, html):
        assert tier_tokens(text) == [], tier_tokens(text)


def test_the_tier_check_finds_a_layer_written_the_old_way() -> None:
    found = tier_tokens("gen   1 L1 keep     dev score 0.5; holdout (L3)")
    assert len(found) == 1 and "L1 keep" in found[0]
