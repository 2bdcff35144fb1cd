"""How much text that holds no secret does the redactor change? Measured on the examples' traces.

Each example in ``examples/`` is evaluated on all its cases in a temporary copy (binpack and slugify run their
real programs; the two LLM examples answer from the scripted server on loopback: support-prompt with the
replies a support model writes to its twelve messages (below), sentiment-fewshot with a one-word label). The
redactor is built as the loop builds it (``secrets_for`` over every case; holdout and regression cases hidden),
and applied to what a proposer would see of each trace: the output text, the stdout and stderr tails and the
error.

A character "holds a secret" when it lies in an occurrence of a whole secret, ignoring case, accents and the
separators between its letters and digits (a check value echoed by a correct output — "sorry" or "48213" in a
support reply — and slugify's buggy "hello,-world!" for the expected "hello-world" are secret occurrences,
not false positives). This is found here with a regular expression per secret, independently of the
redactor's own matching. The false-positive rate is the share of the other characters that the redactor
changed: windows of rubrics and hidden inputs, the distinctive fragments of secrets (rare words, rare runs of
two words, numbers of three or more digits: issue 32), cut-off pieces, decoded runs and short values matched
where no whole secret stands.

The examples' traces are short (a few thousand characters), so a second figure applies each example's
redactor to ordinary prose that holds none of its secrets: this repository's README.md and docs/*.md.

Both rates must stay at or under :data:`CEILING` (0.5%); the benchmark exits with status 1 when one is above.

Run: python benchmarks/redaction_fp.py [--examples examples] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fakes.llm_server

import yaml  # noqa: E402
from tests.fakes.llm_server import ScriptedLLMServer  # noqa: E402

from assay.aio import run_sync  # noqa: E402
from assay.config import load_config  # noqa: E402
from assay.evaluation.key_redactor import key_redactor  # noqa: E402
from assay.evaluation.session import evaluate_project, select_cases  # noqa: E402
from assay.model import Split  # noqa: E402
from assay.proposers.redaction import Redactor  # noqa: E402

CEILING = 0.005
SIGN_OFF = "\n\nBest regards,\nThe Northwind Support Team"
SUPPORT_REPLIES = {
    "48213": "Hi there,\n\nI'm sorry your order #48213 hasn't arrived yet. You can follow the parcel with the "
    'tracking link under "My orders" on northwind.example; if it shows no movement for two days, reply to '
    "this email and we will chase the carrier for you.",
    "boots": "Hello,\n\nI'm sorry the boots wore out so quickly, that is not the quality we expect either. "
    "Could you send me your order number? Once the boots are back with us, the refund goes to your original "
    "payment method within 5-10 business days.",
    "tent I bought": "Hi,\n\nYes, you can. Unused items can be returned within 30 days of delivery for a full "
    'refund, so your tent still qualifies. Start the return under "My orders" and we will email you a label.',
    "password": "Hello,\n\nPlease do not send your card number by email: we never need it to find your account. "
    'You can reset your password with the "Forgot password" link on the sign-in page; the link arrives within '
    "a few minutes.",
    "THIRD time": "Hello,\n\nI'm truly sorry you have had to write to us three times about your stove. I have "
    "put your case at the top of the queue: we will send you a replacement stove today, and you will receive "
    "the tracking details by email.",
    "lawyer": "Hello,\n\nI understand how frustrating this is. I have escalated your refund to a senior member "
    "of our team, who will contact you before Friday with the status of your refund.",
    "Canada": "Hi,\n\nWe ship to Canada. Standard shipping is $6.95 for orders under $50, so your $30 order "
    "would ship for $6.95; orders over $50 ship free.",
    "Hola": "Hola,\n\nLamentamos mucho que la mochila llegara rota. Podemos enviarle un reemplazo gratuito o un "
    "reembolso completo, lo que prefiera. ¿Nos envía una foto del daño y su número de pedido?",
    "essay": "Hi,\n\nThanks for reaching out! I'm only able to help with questions about Northwind orders and "
    "gear, so I can't write the essay for you. Good luck with your assignment!",
    "discount": "Hi,\n\nThank you for being with us for so many years, it means a lot. We don't have a discount "
    "to offer at the moment, but our newsletter announces every seasonal sale first.",
    "rain jacket": "Hi,\n\nThank you so much for the kind words! We're glad the rain jacket keeps you dry. "
    "Enjoy your next trip!",
    "55190": "Hello,\n\nI'm sorry the camping stove arrived with a dented burner. We will send a free "
    "replacement for order 55190, or a refund if you prefer. Could you reply with a photo of the damage?",
}
POSITIVE = re.compile(r"\b(great|comfortable|perfect|fresh|gripping|brilliant|easy|dry|moving|kind|rich|"
                      r"powerful|flaky|wonderful|satisfying|magic|smooth|pleasure|lovely|excellent|best)")  # fmt: skip


def support_reply(body: dict[str, Any]) -> str:
    message = body["messages"][-1]["content"]
    text = message if isinstance(message, str) else "".join(b.get("text", "") for b in message)
    if "You grade one output" in str(body["messages"][0].get("content", "")) or "VERDICT" in text:
        return "VERDICT: PASS\nREASON: polite and concrete"
    for key, reply in SUPPORT_REPLIES.items():
        if key in text:
            return reply + SIGN_OFF
    return "Hi,\n\nThanks for your message, we will get back to you shortly." + SIGN_OFF


def label_reply(body: dict[str, Any]) -> str:
    text = str(body["messages"][-1]["content"]).rsplit("Review:", 1)[-1]
    return "positive" if POSITIVE.search(text.lower()) else "negative"


@contextmanager
def copy_of(example: Path, url: str | None) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="assay-fp-") as tmp:
        root = Path(tmp) / example.name
        shutil.copytree(example, root, ignore=shutil.ignore_patterns(".assay", "__pycache__"))
        config = root / "assay.yaml"
        data = yaml.safe_load(config.read_text())
        if data["runner"]["type"] == "llm":
            assert url is not None
            sections = [data["runner"], data.get("judge")]
            for section in filter(None, sections):
                section.update(model="openai:scripted", base_url=url, api_key_env=None, max_retries=0)
            config.write_text(yaml.safe_dump(data, sort_keys=False))
        yield root


def _unaccented(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded without accents, and for each of its characters the index it came from."""
    out, where = [], []
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKD", char.casefold()):
            if not unicodedata.combining(piece):
                out.append(piece)
                where.append(index)
    return "".join(out), where


def secret_spans(text: str, secrets: list[str], words: Sequence[str] = ()) -> list[tuple[int, int]]:
    """Occurrences of whole secrets, ignoring case, accents and separators (see the module docstring); the
    structural ``words`` count as whole words only."""
    plain, where = _unaccented(text)
    spans = []
    for secret in [*secrets, *words]:
        letters = [c for c in _unaccented(secret)[0] if c.isalnum()]
        if not letters:
            pattern = re.escape(secret.casefold())
        else:
            pattern = r"[\W_]*".join(re.escape(c) for c in letters)
            if len(letters) < 6 or secret in words:  # short values and words count as whole words only
                pattern = rf"(?<![^\W_]){pattern}(?![^\W_])"
        for match in re.finditer(pattern, plain):
            if match.end() > match.start():
                spans.append((where[match.start()], where[match.end() - 1] + 1))
    return spans


def covered(spans: list[tuple[int, int]], length: int) -> list[bool]:
    mask = [False] * length
    for start, end in spans:
        for i in range(start, min(end, length)):
            mask[i] = True
    return mask


def prose() -> list[str]:
    """Ordinary technical prose: the README and the docs, one string per paragraph."""
    texts = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        texts += [p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    return texts


def count(redactor: Redactor, texts: list[str]) -> tuple[int, int, int]:
    """(characters, characters without a secret, of those the ones the redactor changed)."""
    total = clean = changed = 0
    for text in texts:
        truth = covered(secret_spans(text, redactor.secrets, redactor.words), len(text))
        hit = covered(redactor._spans(text, short=True, depth=0), len(text))
        total += len(text)
        clean += truth.count(False)
        changed += sum(h and not t for h, t in zip(hit, truth, strict=True))
    return total, clean, changed


def measure(example: Path, url: str | None) -> dict[str, Any]:
    with copy_of(example, url) as root:
        config = load_config(root / "assay.yaml")
        selection = select_cases(config, "all")
        result = run_sync(evaluate_project(config, selection, use_cache=False))
        dev = [c for c, split in selection.everything if split == Split.DEV]
        hidden = [c for c, split in selection.everything if split != Split.DEV]
        redactor = key_redactor(config, dev, hidden)
        outputs = [
            text
            for case in result.cases
            for text in (
                case.output.text,
                case.output.stdout_tail,
                case.output.stderr_tail,
                case.output.error,
            )
            if text
        ]
        total, clean, changed = count(redactor, outputs)
        _, prose_clean, prose_changed = count(redactor, prose())
        return {
            "example": example.name,
            "cases": len(result.cases),
            "secrets": len(redactor.secrets) + len(redactor.words),
            "characters": total,
            "without_secret": clean,
            "changed_without_secret": changed,
            "false_positive_rate": changed / clean if clean else 0.0,
            "prose_without_secret": prose_clean,
            "prose_changed": prose_changed,
            "prose_false_positive_rate": prose_changed / prose_clean if prose_clean else 0.0,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=Path, default=ROOT / "examples")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with ScriptedLLMServer() as server:
        for example in sorted(p for p in args.examples.iterdir() if (p / "assay.yaml").exists()):
            server.reset()
            server.default = label_reply if example.name == "sentiment-fewshot" else support_reply
            rows.append(measure(example, server.openai_url))
    clean = sum(r["without_secret"] for r in rows)
    changed = sum(r["changed_without_secret"] for r in rows)
    prose_clean = sum(r["prose_without_secret"] for r in rows)
    prose_changed = sum(r["prose_changed"] for r in rows)
    summary = {
        "examples": rows,
        "false_positive_rate": changed / clean if clean else 0.0,
        "prose_false_positive_rate": prose_changed / prose_clean if prose_clean else 0.0,
    }
    summary["ceiling"] = CEILING
    over = [name for name in ("false_positive_rate", "prose_false_positive_rate") if summary[name] > CEILING]
    if args.json:
        print(json.dumps(summary, indent=2))
        sys.exit(1 if over else 0)
    header = f"{'example':18s} {'cases':>5s} {'secrets':>7s} {'chars':>6s} {'no secret':>9s} {'changed':>7s}"
    print(header + f" {'FP rate':>8s}   {'prose':>7s} {'changed':>7s} {'FP rate':>8s}")
    for r in rows:
        print(
            f"{r['example']:18s} {r['cases']:5d} {r['secrets']:7d} {r['characters']:6d} {r['without_secret']:9d}"
            f" {r['changed_without_secret']:7d} {r['false_positive_rate']:8.2%}   {r['prose_without_secret']:7d}"
            f" {r['prose_changed']:7d} {r['prose_false_positive_rate']:8.2%}"
        )
    print(
        f"{'all':18s} {'':5s} {'':7s} {'':6s} {clean:9d} {changed:7d} {summary['false_positive_rate']:8.2%}"
        f"   {prose_clean:7d} {prose_changed:7d} {summary['prose_false_positive_rate']:8.2%}"
    )
    print(f"ceiling {CEILING:.2%}: " + (f"ABOVE ({', '.join(over)})" if over else "both rates under it"))
    if over:
        sys.exit(1)


if __name__ == "__main__":
    main()
