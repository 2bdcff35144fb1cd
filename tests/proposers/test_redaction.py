"""The Redactor and secrets_for: every form of every check value, expected output and holdout case."""

from __future__ import annotations

import json

from assay.model import Case, CheckSpec
from assay.proposers.redaction import REDACTED, Redactor, secrets_for
from assay.proposers.secrets import schema_secrets, words_for
from tests.proposers import _planted


def test_exact_and_case_insensitive() -> None:
    r = Redactor(["Quokka-Lantern"])
    assert r.redact("say Quokka-Lantern now") == f"say {REDACTED} now"
    assert r.redact("QUOKKA-LANTERN and quokka-lantern") == f"{REDACTED} and {REDACTED}"
    assert r.redact("nothing secret here") == "nothing secret here"


def test_escaped_quoted_and_reflowed_forms() -> None:
    secret = 'say "hi" to\nthe walrus'
    r = Redactor([secret])
    for text in (
        json.dumps(secret),
        json.dumps(json.dumps(secret)),
        repr(secret),
        f"'{secret}'",
        'say "hi"   to the walrus',
        'SAY "HI" TO\n\n  THE WALRUS',
    ):
        out = r.redact(f"before {text} after")
        assert "walrus" not in out.lower(), (text, out)
        assert REDACTED in out and out.startswith("before ") and out.endswith(" after")


def test_quoted_forms_keep_their_quotes() -> None:
    r = Redactor(["marzipan"])
    assert r.redact("""'marzipan' "Marzipan" `MARZIPAN`""") == f"""'{REDACTED}' "{REDACTED}" `{REDACTED}`"""


def test_each_long_line_of_a_multi_line_secret() -> None:
    r = Redactor(["first line is long\nok\nthird line also long"])
    out = r.redact("we saw: third line also long; ok; first line is long")
    assert out == f"we saw: {REDACTED}; ok; {REDACTED}"


def test_short_secrets_only_as_whole_tokens() -> None:
    r = Redactor(["a", "42"])
    assert r.redact("a cat ate a banana") == f"{REDACTED} cat ate {REDACTED} banana"
    assert r.redact("answer: 42, not 420 or x42") == f"answer: {REDACTED}, not 420 or x42"


def test_longest_secret_wins_and_replacements_stay_whole() -> None:
    r = Redactor(["walrus", "cerulean walrus verdict", "dact", "redacted-marker"])
    assert r.redact("the cerulean walrus verdict, a walrus") == f"the {REDACTED}, a {REDACTED}"
    # "dact" is short: whole words only; "walrus" (6 letters) is found inside a longer word too.
    assert r.redact("redaction of the walruses") == f"redaction of the {REDACTED}es"
    assert r.redact(r.redact("a redacted-marker")) == f"a {REDACTED}"


def test_cut_off_pieces_at_the_edges_of_tails() -> None:
    r = Redactor(["the secret grading phrase"])
    assert r.redact("et grading phrase and more") == f"{REDACTED} and more"
    assert r.redact("output ends with the secret gra") == f"output ends with {REDACTED}"
    assert r.redact("grading is fine") == "grading is fine"


def test_redact_any_and_empty_secrets() -> None:
    r = Redactor(["", "   ", "zebra-stripe"])
    assert r.redact_any({"k": ["a zebra-stripe", 3], "zebra-stripe": None}) == {
        "k": [f"a {REDACTED}", 3],
        REDACTED: None,
    }
    assert Redactor([]).redact("anything") == "anything"


def test_short_false_keeps_token_matches_of_short_secrets() -> None:
    r = Redactor(["1", "long secret"])
    assert (
        r.redact('{"exit_code": 1, "t": "long secret"}', short=False)
        == f'{{"exit_code": 1, "t": "{REDACTED}"}}'
    )


def test_secrets_for_collects_the_answer_key() -> None:
    secrets = secrets_for(_planted.dev_cases(), _planted.holdout_cases())
    for value in (
        _planted.CONTAINS,
        _planted.REGEX,
        _planted.NOT_CONTAINS,
        _planted.RUBRIC,
        _planted.RUBRIC_WORD,
        _planted.EXPECTED,
        _planted.SCRIPT,
        "graders/secret_grader_x9.py",
        "secret_grader_x9.py",
        _planted.FACT,
        _planted.HOLDOUT_INPUT,
        _planted.HOLDOUT_EXPECTED,
        "hello",
    ):
        assert value in secrets, value
    assert json.dumps({"type": "object", "required": [_planted.SCHEMA_FIELD]}) in secrets
    # A schema's property names are structural words: hidden where they stand whole, never inside other words.
    assert _planted.SCHEMA_FIELD not in secrets
    assert words_for(_planted.dev_cases(), _planted.holdout_cases()) == [_planted.SCHEMA_FIELD]
    # Dev inputs are what the proposer may see; JSON Schema vocabulary would only blank ordinary words.
    assert "A customer asks for a refund." not in secrets and "late delivery" not in secrets
    assert "object" not in secrets


def test_secrets_for_values_of_every_shape() -> None:
    case = Case(
        id="c",
        checks=[
            CheckSpec(type="contains_any", value=["alpha-one", "beta-two"]),
            CheckSpec(type="fact_coverage", value="fact number one | fact number two"),
            CheckSpec(type="python", value="graders/check.py:grade"),
            CheckSpec(type="equals", value=7),
            CheckSpec(type="json_valid", value=True),
            CheckSpec(
                type="similar", value="reference text", options={"note": "optional hint"}, text="wording"
            ),
        ],
    )
    holdout = Case(id="h", vars={"name": "Zanzibar", "n": 5, "nested": {"deep": "hidden-leaf"}})
    secrets = secrets_for([case], [holdout])
    for value in ("alpha-one", "beta-two", "fact number one", "fact number two", "graders/check.py:grade", "7",
                  "reference text", "optional hint", "wording", "Zanzibar", "hidden-leaf"):  # fmt: skip
        assert value in secrets, value
    assert "True" not in secrets and "5" not in secrets
    assert secrets == sorted(secrets, key=lambda s: (-len(s), s))


def test_base64_right_after_an_escape_is_decoded() -> None:
    """JSON and Python escapes glue their letters to what follows (`\\u201cMDAg...`): found by the property
    test with the secret `00 0000`, base64-encoded between escaped curly quotes."""
    import base64

    redactor = Redactor(["00 0000"])
    encoded = base64.b64encode(b"00 0000").decode()
    for text in (f"\\u201c{encoded}\\u201d", f"\\x22{encoded}\\x22", f"\\n{encoded}"):
        assert encoded not in redactor.redact(text), text
    assert redactor.redact("\\u201cnothing here\\u201d") == "\\u201cnothing here\\u201d"


def test_structural_words_only_where_they_stand_whole() -> None:
    """A runner's `exit code 3` stays as it is when a schema names a property `exit`; the property name is
    hidden where it stands as a word of its own."""
    r = Redactor([], ["exit", "refund_reference_code"])
    assert r.redact("process exit code 3") == f"process {REDACTED} code 3"
    assert r.redact("exitcode 3; an exiting process") == "exitcode 3; an exiting process"
    assert r.redact('{"refund_reference_code": 1}') == f'{{"{REDACTED}": 1}}'
    assert r.redact("refund reference code") == REDACTED
    assert r.redact("refund_reference_codes") == "refund_reference_codes"


def test_a_schema_holds_values_and_property_names() -> None:
    schema = {
        "type": "object",
        "required": ["status", "ticket_ref"],
        "properties": {
            "status": {"type": "string", "enum": ["ESCALATED-TIER-3"]},
            "ticket_ref": {"type": "string", "pattern": "^TK-[0-9]{5}$"},
            "nested": {"type": "object", "properties": {"inner_key": {"const": "obsidian-kestrel"}}},
        },
    }
    values, words = schema_secrets(schema)
    assert set(values) == {"ESCALATED-TIER-3", "^TK-[0-9]{5}$", "obsidian-kestrel"}
    assert set(words) == {"status", "ticket_ref", "nested", "inner_key"}
    spec = CheckSpec(type="json_schema", value=schema)
    secrets = secrets_for([Case(id="c", checks=[spec])], [])
    assert "ESCALATED-TIER-3" in secrets and "ticket_ref" not in secrets and "status" not in secrets
