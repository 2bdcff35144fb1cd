"""Security patterns: each critical and warning rule, harmless look-alikes, and no secret in a message."""

from __future__ import annotations

import pytest

from assay.static.patterns import scan_patterns
from tests.static.fakes import FakeSecrets

CRITICAL = [
    ("rm -rf /", "rm-rf-root"),
    ("sudo rm -fr /*", "rm-rf-root"),
    ("rm -r -f --no-preserve-root /", "rm-rf-root"),
    ('os.system("rm -rf /")', "rm-rf-root"),
    ("cleanup() { rm -Rf / ; }", "rm-rf-root"),
    ("rm -rf ~", "rm-rf-home"),
    ("rm -rf ~/", "rm-rf-home"),
    ('rm --recursive --force "$HOME"', "rm-rf-home"),
    ("rm -rf /tmp/cache ${HOME}/*", "rm-rf-home"),
    ("DROP TABLE users;", "sql-drop"),
    ('cur.execute("drop database prod")', "sql-drop"),
    ("TRUNCATE TABLE logs", "sql-truncate"),
]

WARNING = [
    ("cat /home/alice/notes.txt", "home-path"),
    ("open('/Users/bob/Desktop/x.csv')", "home-path"),
    ("sudo apt-get install jq", "sudo"),
    ("chmod 777 run.sh", "chmod-777"),
    ("chmod -R 0777 /srv", "chmod-777"),
    ("os.chmod(path, 0o777)", "chmod-777"),
    ("result = eval(user_input)", "eval"),
    ("exec(compile(src, 'x', 'exec'))", "exec"),
]

HARMLESS = [
    "rm -rf /tmp/build",
    "rm -rf ./dist node_modules",
    "rm -f ~/.cache/tool.lock",
    "rm /",
    "form -rf /",
    "We drop tables of contents from the summary.",
    "truncate the table of results",
    'password = os.environ["DB_PASSWORD"]',
    "password = get_password()",
    'password = "<your password>"',
    'password = "${DB_PASSWORD}"',
    'password = "********"',
    "password_hint = 'ask the admin'",
    "pip install scikit-learn  # sk-learn",
    "task-1234567890abcdefghijk",
    "match = pattern.exec(text)",
    "self.evaluate(x)",
    "executor.submit(job)",
    "pseudo apt",
    "see /home/ for details",
]


def rules_of(text: str, rel: str = "script.py") -> list[tuple[str, str, int | None]]:
    return [(f.severity, f.rule, f.line) for f in scan_patterns(rel, text)]


@pytest.mark.parametrize(("text", "rule"), CRITICAL)
def test_critical_patterns(text: str, rule: str) -> None:
    assert ("critical", rule, 1) in rules_of(text)


@pytest.mark.parametrize(("text", "rule"), WARNING)
def test_warning_patterns(text: str, rule: str) -> None:
    assert rules_of(text) == [("warning", rule, 1)]


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_lookalikes(text: str) -> None:
    assert rules_of(text) == []


def test_secrets_are_critical_and_never_echoed(fake: FakeSecrets) -> None:
    text = "\n".join(
        [
            f'aws = "{fake.aws_key}"',
            f"token: {fake.github_token}",
            f"GH={fake.fine_grained_github}",
            f"client = OpenAI(api_key='{fake.sk_key}')",
            f'password = "{fake.password}"',
            fake.private_key_header,
            f"aws_secret_access_key = {fake.aws_secret}",
        ]
    )
    findings = scan_patterns("settings.py", text)
    assert [(f.rule, f.line) for f in findings] == [
        ("aws-access-key", 1),
        ("aws-secret-key", 7),
        ("api-key", 4),
        ("github-token", 2),
        ("github-token", 3),
        ("private-key", 6),
        ("hardcoded-password", 5),
    ]
    assert all(f.severity == "critical" for f in findings)
    for finding in findings:
        for secret in fake.all():
            assert secret not in finding.message
            assert secret[4:16] not in finding.message


def test_unquoted_password_only_in_config_like_files(fake: FakeSecrets) -> None:
    line = f"DB_PASSWORD={fake.password}"
    assert rules_of(line, ".env") == [("critical", "hardcoded-password", 1)]
    assert rules_of(f"  password: {fake.password}", "config/app.yaml") == [
        ("critical", "hardcoded-password", 1)
    ]
    assert rules_of("password = settings.db_password", "app.py") == []
    assert rules_of("DB_PASSWORD=$1", "deploy.sh") == []


def test_allowlist_pragma_silences_secrets_only(fake: FakeSecrets) -> None:
    text = f'key = "{fake.aws_key}"  # pragma: allowlist secret\nsudo ls  # pragma: allowlist secret\n'
    assert rules_of(text) == [("warning", "sudo", 2)]


def test_line_numbers_and_one_finding_per_rule_and_line() -> None:
    text = "x = 1\n\n# nothing\neval(a); eval(b)\nsudo sudo ls\n"
    assert sorted(rules_of(text)) == [("warning", "eval", 4), ("warning", "sudo", 5)]


def test_non_secret_messages_quote_the_match() -> None:
    [finding] = scan_patterns("deploy.sh", 'ssh host "rm -rf /"')
    assert finding.message == "recursive delete of the filesystem root: rm -rf /"
    [home] = scan_patterns("run.sh", "cd /home/alice/project")
    assert home.message.endswith("/home/alice/")
