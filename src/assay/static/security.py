"""The security scan: our patterns on every line, plus secrets found by the detect-secrets library (all
its plugins, default filters).

detect-secrets costs about a millisecond per line, so it reads only the lines a cheap superset filter
flags as possible secrets (keywords, long tokens with digits, quoted high-entropy-looking strings, IPs,
credentials in URLs). Those lines are copied, keeping each file's name, into a scratch directory, scanned
with ``SecretsCollection.scan_file`` and mapped back to their original line numbers.
"""

from __future__ import annotations

import re
import tempfile
import threading
from pathlib import Path, PurePosixPath

from assay.static.patterns import scan_patterns, secret_lines
from assay.static.report import Finding, Severity

CANDIDATE_WORDS = re.compile(
    r"key|pass|pwd|secret|token|auth|cred|contrase|private|bearer|cloudant|softlayer|\bsl\b|ibm|begin"
    r"|://[^\s/]*:[^\s/]*@|\b\d{1,3}(?:\.\d{1,3}){3}\b"
    r"|[\"'][\w+/=-]{20,}[\"']|[\"'][0-9a-f]{8,}[\"']"
)  # matched against the lower-cased line: much faster than re.IGNORECASE on an alternation
LONG_TOKEN = re.compile(r"[\w+/=.:-]{20,}")
DIGIT = re.compile(r"\d")
RULES = {
    "AWS Access Key": "aws-access-key",
    "GitHub Token": "github-token",
    "OpenAI Token": "api-key",
    "Private Key": "private-key",
    "Secret Keyword": "hardcoded-secret",
}
# Likely false positives in ordinary code and prose (hashes, ids, addresses): worth a look, not a stop.
WARNING_TYPES = frozenset({"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"})
MAX_PIECE = 2000
PIECE_OVERLAP = 256
# detect-secrets keeps its settings in a process-wide singleton.
_LOCK = threading.Lock()


def _rule(secret_type: str) -> str:
    return RULES.get(secret_type) or "secret-" + re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _candidate(line: str) -> bool:
    """Could detect-secrets flag this line? (A superset test: vendor tokens are long and hold digits.)"""
    if CANDIDATE_WORDS.search(line.lower()):
        return True
    return any(DIGIT.search(token) for token in LONG_TOKEN.findall(line))


def _pieces(line: str) -> list[str]:
    """A very long line (minified code, data) as overlapping pieces: detect-secrets slows down badly on
    huge lines, and a secret is far shorter than the overlap."""
    if len(line) <= MAX_PIECE:
        return [line]
    step = MAX_PIECE - PIECE_OVERLAP
    return [line[i : i + MAX_PIECE] for i in range(0, len(line) - PIECE_OVERLAP, step)]


def _copy_path(scratch: Path, index: int, name: str, used: set[str]) -> Path:
    """Where to copy a file's candidate lines: its own name (detect-secrets filters look at names)."""
    if name not in used:
        used.add(name)
        return scratch / name
    folder = scratch / str(index)
    folder.mkdir()
    return folder / name


def scan_secrets(texts: dict[str, str]) -> list[Finding]:
    """detect-secrets findings for ``{relative path: text}``; messages name the secret type only."""
    candidates: dict[str, list[tuple[int, str]]] = {}
    for rel, text in texts.items():
        # Lines split on "\n" only, as the patterns count them; a stray "\r" must not add a line in the copy.
        lines = [
            (n, piece)
            for n, line in enumerate(text.split("\n"), 1)
            for piece in _pieces(line.replace("\r", " "))
            if _candidate(piece)
        ]
        if lines:
            candidates[rel] = lines
    if not candidates:
        return []
    # detect-secrets (and the requests it imports) costs a fifth of a second to import: only when needed.
    from detect_secrets.core.secrets_collection import SecretsCollection
    from detect_secrets.settings import default_settings

    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="assay-secrets-") as scratch, _LOCK, default_settings():
        origin: dict[str, tuple[str, list[int]]] = {}
        used: set[str] = set()
        for index, (rel, lines) in enumerate(candidates.items()):
            copy = _copy_path(Path(scratch), index, PurePosixPath(rel).name, used)
            copy.write_text("\n".join(line for _, line in lines) + "\n", encoding="utf-8")
            origin[str(copy)] = (rel, [n for n, _ in lines])
        collection = SecretsCollection()
        for copy_name in origin:
            collection.scan_file(copy_name)
        for filename, secret in collection:
            rel, numbers = origin[filename]
            position = (secret.line_number or 0) - 1
            line = numbers[position] if 0 <= position < len(numbers) else None
            severity: Severity = "warning" if secret.type in WARNING_TYPES else "critical"
            message = f"possible secret: {secret.type} (detect-secrets)"
            findings.append(
                Finding(severity=severity, rule=_rule(secret.type), file=rel, line=line, message=message)
            )
    # One finding per rule and line (pieces of a long line overlap); an entropy hit on a line already
    # holding a named secret adds nothing.
    unique = list({(f.file, f.line, f.rule): f for f in findings}.values())
    named = {(f.file, f.line) for f in unique if f.severity == "critical"}
    return [f for f in unique if f.severity == "critical" or (f.file, f.line) not in named]


def scan_security(texts: dict[str, str]) -> list[Finding]:
    """Pattern and detect-secrets findings for ``{relative path: text}``; a line a pattern already reports
    as a secret is not reported again by detect-secrets."""
    findings = [finding for rel, text in texts.items() for finding in scan_patterns(rel, text)]
    known = secret_lines(findings)
    findings += [f for f in scan_secrets(texts) if (f.file, f.line) not in known]
    return findings
