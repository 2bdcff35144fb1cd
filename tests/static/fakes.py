"""Fake secrets, assembled at runtime so that no secret-looking literal sits in the repository."""

from __future__ import annotations


class FakeSecrets:
    """Credentials in real formats, none of them valid anywhere."""

    aws_key = "AKIA" + "Z7QW3RT5YU8IOP2L"
    github_token = "ghp" + "_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    fine_grained_github = "github" + "_pat_" + "11ABCDEFG0" + "abcdefghijklmnopqrstuvwxyz012345"
    sk_key = "sk" + "-proj-" + "Xy7Qp2Lm9Rt4Vb6Nc8Zd1Fg3Hj5Kw0"
    password = "hunter" + "2horse!"
    slack_token = "xox" + "b-1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    aws_secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
    private_key_header = "-----BEGIN RSA " + "PRIVATE KEY-----"

    def all(self) -> list[str]:
        return [
            self.aws_key,
            self.aws_secret,
            self.github_token,
            self.fine_grained_github,
            self.sk_key,
            self.password,
            self.slack_token,
        ]
