"""Python graders for the parity suite."""


def get_assert(output, context):
    # The order id in the vars must be echoed back.
    return context["vars"]["order_id"] in output


def mentions_days(output, context):
    return {"pass": "days" in output.lower(), "score": 1.0, "reason": "looked for days"}


def snake_case_fail(output, context):
    # Python graders may say pass_ (pass is a keyword): this one fails.
    return {"pass_": False, "score": 0.0, "reason": "always fails"}


def length_score(output, context):
    return len(output) / 100


def as_text(output, context):
    # promptfoo reads the string "true" from a Python grader as a pass.
    return "true"


def low_score_dict(output, context):
    return {"pass": True, "score": 0.2, "reason": "a low score"}
