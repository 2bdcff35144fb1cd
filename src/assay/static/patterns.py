"""Security patterns: destructive commands, secrets in known formats, and risky habits.

A finding for a secret names the kind of secret, never the matched text. Lines carrying detect-secrets'
``pragma: allowlist secret`` are not reported for secrets.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from assay.static.report import Finding, Severity

ALLOWLIST_MARK = "pragma: allowlist secret"
SHOWN_CHARS = 60
ROOT_TARGETS = frozenset({"/", "/*", "/.", "/.*", "--no-preserve-root"})
HOME_TARGETS = frozenset(
    {"~", "~/", "~/*", "~/.*", *(f"{h}{s}" for h in ("$HOME", "${HOME}") for s in ("", "/", "/*", "/.*"))}
)
PLACEHOLDER_VALUES = frozenset({"none", "null", "nil", "true", "false", "password", "passwd", "required"})
# Files where an unquoted ``password=value`` is a literal rather than a variable reference.
LITERAL_ASSIGNMENT_SUFFIXES = frozenset(
    {"", ".env", ".ini", ".cfg", ".conf", ".properties", ".yaml", ".yml", ".sh"}
)


@dataclass(frozen=True)
class Pattern:
    """One rule: a regex, a verdict, and an optional test that rejects harmless matches."""

    rule: str
    severity: Severity
    regex: re.Pattern[str]
    message: str
    secret: bool = False
    accept: Callable[[re.Match[str]], bool] | None = None
    suffixes: frozenset[str] | None = None  # only files with these suffixes (None: every file)
    hints: tuple[str, ...] = ()  # lower-case substrings one of which any match contains (a fast pre-test)
    show_match: bool = False  # quote the matched text in the message (never for secrets)

    def describe(self, match: re.Match[str]) -> str:
        if self.secret or not self.show_match:
            return self.message
        shown = " ".join(match.group(0).split()).strip("\"'`(), ")
        if len(shown) > SHOWN_CHARS:
            shown = shown[:SHOWN_CHARS] + "..."
        return f"{self.message}: {shown}"


def _rm_targets(match: re.Match[str]) -> tuple[bool, set[str]]:
    words = [w.strip("\"'`(),") for w in match.group("args").split()]
    flags = [w for w in words if w.startswith("-")]
    recursive = any(f == "--recursive" or (not f.startswith("--") and "r" in f.lower()) for f in flags)
    return recursive, {w for w in words if w not in flags or w == "--no-preserve-root"}


def _rm_root(match: re.Match[str]) -> bool:
    recursive, targets = _rm_targets(match)
    return recursive and bool(targets & ROOT_TARGETS)


def _rm_home(match: re.Match[str]) -> bool:
    recursive, targets = _rm_targets(match)
    return recursive and bool(targets & HOME_TARGETS)


def _real_value(match: re.Match[str]) -> bool:
    value = match.group("value").strip()
    if value[:1] in "${<%(*" or "{{" in value or "(" in value:
        return False  # a variable, template or call, not a literal password
    return value.lower() not in PLACEHOLDER_VALUES and len(set(value)) > 1


NEWLINE = re.compile(r"\n")
RM = re.compile(r"(?<![\w./-])rm\s+(?P<args>[^;&|\n]+)")
# The keyword may end a longer name (DB_PASSWORD, db-password); a look-behind keeps the scan linear.
PASSWORD_KEY = r"(?<![A-Za-z0-9])(?:password|passwd|passphrase|pwd)"

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "rm-rf-root",
        "critical",
        RM,
        "recursive delete of the filesystem root",
        accept=_rm_root,
        hints=("rm",),
        show_match=True,
    ),
    Pattern(
        "rm-rf-home",
        "critical",
        RM,
        "recursive delete of the home directory",
        accept=_rm_home,
        hints=("rm",),
        show_match=True,
    ),
    Pattern(
        "sql-drop",
        "critical",
        re.compile(r"(?i)\bdrop\s+(?:table|database|schema)\b"),
        "SQL DROP statement",
        hints=("drop",),
        show_match=True,
    ),
    Pattern(
        "sql-truncate",
        "critical",
        re.compile(r"(?i)\btruncate\s+table\b"),
        "SQL TRUNCATE TABLE",
        hints=("truncate",),
    ),
    Pattern(
        "aws-access-key",
        "critical",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        "AWS access key ID",
        secret=True,
        hints=("akia", "asia", "abia", "acca"),
    ),
    Pattern(
        "aws-secret-key",
        "critical",
        re.compile(
            r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
        "AWS secret access key",
        secret=True,
        hints=("secret",),
    ),
    Pattern(
        "api-key",
        "critical",
        re.compile(r"(?<![\w-])sk-(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}"),
        "API secret key (sk-... format, e.g. OpenAI or Anthropic)",
        secret=True,
        hints=("sk-",),
    ),
    Pattern(
        "github-token",
        "critical",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        "GitHub token",
        secret=True,
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Pattern(
        "private-key",
        "critical",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        "private key",
        secret=True,
        hints=("private key",),
    ),
    Pattern(
        "hardcoded-password",
        "critical",
        re.compile(rf"(?i){PASSWORD_KEY}[\"']?\s*[:=]\s*(?P<q>[\"'])(?P<value>[^\"'\n]{{4,}})(?P=q)"),
        "hard-coded password",
        secret=True,
        accept=_real_value,
        hints=("pass", "pwd"),
    ),
    Pattern(
        "hardcoded-password",
        "critical",
        re.compile(rf"(?im)^\s*(?:export\s+)?[\w-]*?{PASSWORD_KEY}\s*[:=]\s*(?P<value>[^\s\"'#]{{4,}})\s*$"),
        "hard-coded password",
        secret=True,
        accept=_real_value,
        suffixes=LITERAL_ASSIGNMENT_SUFFIXES,
        hints=("pass", "pwd"),
    ),
    Pattern(
        "home-path",
        "warning",
        re.compile(r"(?<![\w.~-])(?:/home/[\w.-]+/|/Users/[\w.-]+/|[A-Za-z]:\\Users\\[\w.-]+\\)"),
        "user home path (not portable)",
        hints=("/home/", "/users/", "\\users\\"),
        show_match=True,
    ),
    Pattern(
        "sudo", "warning", re.compile(r"(?<![\w-])sudo(?=\s)"), "sudo (root privileges)", hints=("sudo",)
    ),
    Pattern(
        "chmod-777",
        "warning",
        re.compile(r"\bchmod\s+(?:-\w+\s+)*(?:0?777|[augo]*\+rwx)\b|\bchmod\([^()]*,\s*0o?777\b"),
        "world-writable permissions",
        hints=("chmod",),
        show_match=True,
    ),
    Pattern(
        "eval", "warning", re.compile(r"(?<![\w.$])eval\s*\("), "eval() of dynamic code", hints=("eval",)
    ),
    Pattern(
        "exec", "warning", re.compile(r"(?<![\w.$])exec\s*\("), "exec() of dynamic code", hints=("exec",)
    ),
)


def _suffix(rel: str) -> str:
    path = PurePosixPath(rel)
    return ".env" if path.name.startswith(".env") else path.suffix.lower()


def scan_patterns(rel: str, text: str) -> list[Finding]:
    """Every pattern finding in one file's text, at most one per (rule, line)."""
    starts = [0, *(m.end() for m in NEWLINE.finditer(text))]
    lines = text.split("\n")
    suffix = _suffix(rel)
    lowered = text.lower()
    seen: set[tuple[str, int]] = set()
    findings: list[Finding] = []
    for pattern in PATTERNS:
        if pattern.suffixes is not None and suffix not in pattern.suffixes:
            continue
        if pattern.hints and not any(hint in lowered for hint in pattern.hints):
            continue
        for match in pattern.regex.finditer(text):
            line = bisect_right(starts, match.start())
            if (pattern.rule, line) in seen or (pattern.accept and not pattern.accept(match)):
                continue
            if pattern.secret and ALLOWLIST_MARK in lines[line - 1]:
                continue
            seen.add((pattern.rule, line))
            findings.append(
                Finding(
                    severity=pattern.severity,
                    rule=pattern.rule,
                    file=rel,
                    line=line,
                    message=pattern.describe(match),
                )
            )
    return findings


def secret_lines(findings: list[Finding]) -> set[tuple[str, int | None]]:
    """(file, line) pairs already reported as secrets by a pattern."""
    secret_rules = {p.rule for p in PATTERNS if p.secret}
    return {(f.file, f.line) for f in findings if f.rule in secret_rules}
