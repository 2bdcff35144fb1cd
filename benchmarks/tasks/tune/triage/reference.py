"""Support triage: the handbook's own rules."""

PLAN_WEIGHT = {"free": 0.0, "pro": 0.6, "enterprise": 1.5}


def triage(ticket: dict) -> dict:
    score = (
        PLAN_WEIGHT[ticket["plan"]]
        + 0.04 * ticket["hours_open"]
        + 0.002 * ticket["amount"]
        - 1.2 * ticket["mood"]
    )
    priority = 1 if score >= 3.2 else 2 if score >= 1.6 else 3
    if ticket["amount"] >= 120:
        queue = "billing"
    elif ticket["replies"] >= 2:
        queue = "tech"
    else:
        queue = "general"
    escalate = priority == 1 and (ticket["amount"] > 400 or ticket["replies"] >= 4)
    return {"queue": queue, "priority": priority, "escalate": escalate}
