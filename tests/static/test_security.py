"""The security scan with detect-secrets: types beyond our patterns, line mapping, no value echoed."""

from __future__ import annotations

import time

import pytest

from assay.static.security import _candidate, scan_secrets, scan_security
from tests.static.fakes import FakeSecrets


def test_every_fake_secret_line_reaches_detect_secrets(fake: FakeSecrets) -> None:
    for secret in fake.all():
        if secret != fake.password:  # a bare password is only recognisable by its keyword
            assert _candidate(f"x = '{secret}'"), secret
            assert _candidate(f"value {secret}"), secret
    assert _candidate(f"db_pass = '{fake.password}'")
    assert not _candidate("def add(a, b):")
    assert not _candidate("    return total / count  # average")


def test_detect_secrets_types_beyond_the_patterns(fake: FakeSecrets) -> None:
    url = "https://admin:" + "pa55w0rdX" + "@db.example.com/app"
    text = (
        f"# settings\nslack: {fake.slack_token}\n\n\nurl: {url}\nhash: 'd41d8cd98f00b204e9800998ecf8427e'\n"
    )
    findings = scan_secrets({"config/app.yaml": text})
    found = {(f.severity, f.rule, f.line) for f in findings}
    assert found == {
        ("critical", "secret-slack-token", 2),
        ("critical", "secret-basic-auth-credentials", 5),
        ("warning", "secret-hex-high-entropy-string", 6),
    }
    slack = next(f for f in findings if f.rule == "secret-slack-token")
    assert slack.message == "possible secret: Slack Token (detect-secrets)"
    for finding in findings:
        assert fake.slack_token not in finding.message and "pa55w0rdX" not in finding.message


def test_line_numbers_map_back_through_many_plain_lines(fake: FakeSecrets) -> None:
    plain = [f"value_{i} = compute({i})" for i in range(200)]
    plain.insert(150, f'SLACK = "{fake.slack_token}"')
    [finding] = scan_secrets({"src/app.py": "\n".join(plain)})
    assert (finding.file, finding.line, finding.severity) == ("src/app.py", 151, "critical")


def test_secret_deep_inside_a_huge_line(fake: FakeSecrets) -> None:
    # The token lands where two 2000-character pieces overlap (17440-17696): still one finding.
    minified = "var a=1;" * 2_000 + "x" * 1500 + f'var t="{fake.slack_token}";' + "var b=2;" * 20_000
    start = time.perf_counter()
    findings = scan_secrets({"dist/app.min.js": "// header\n" + minified + "\n"})
    assert time.perf_counter() - start < 2
    assert [(f.rule, f.line) for f in findings] == [("secret-slack-token", 2)]


def test_same_file_names_in_different_folders(fake: FakeSecrets) -> None:
    texts = {
        "a/config.py": "X = 1\n",
        "b/config.py": f"\nTOKEN = '{fake.slack_token}'\n",
        "c/config.py": "Y = 2",
    }
    findings = scan_secrets(texts)
    assert [(f.file, f.line) for f in findings] == [("b/config.py", 2)]


def test_a_secret_line_is_reported_once(fake: FakeSecrets) -> None:
    findings = scan_security({"keys.py": f'AWS_KEY = "{fake.aws_key}"\n'})
    assert [(f.rule, f.line, f.severity) for f in findings] == [("aws-access-key", 1, "critical")]


@pytest.mark.parametrize("attribute", ["aws_key", "github_token", "sk_key", "slack_token", "password"])
def test_no_secret_value_in_any_message(fake: FakeSecrets, attribute: str) -> None:
    secret = getattr(fake, attribute)
    texts = {
        "app.py": f'password = "{secret}"\nclient("{secret}")\n',
        ".env": f"SECRET_TOKEN={secret}\nDB_PASSWORD={secret}\n",
    }
    findings = scan_security(texts)
    assert any(f.severity == "critical" for f in findings)
    for finding in findings:
        assert secret not in finding.model_dump_json()
