"""Support triage: which queue a ticket goes to, how urgent it is, and whether a team lead sees it."""

PLAN_WEIGHT = {"free": 0.0, "pro": 1.0, "enterprise": 1.0}
HOURS_WEIGHT = 0.01
AMOUNT_WEIGHT = 0.0
MOOD_WEIGHT = 1.0
URGENT = 2.0
NORMAL = 1.0
BILLING_FROM = 500.0
TECH_REPLIES = 4
ESCALATE_AMOUNT = 1000.0


def triage(ticket: dict) -> dict:
    score = (
        PLAN_WEIGHT[ticket["plan"]]
        + HOURS_WEIGHT * ticket["hours_open"]
        + AMOUNT_WEIGHT * ticket["amount"]
        - MOOD_WEIGHT * ticket["mood"]
    )
    if score >= URGENT:
        priority = 1
    elif score >= NORMAL:
        priority = 2
    else:
        priority = 3
    if ticket["amount"] >= BILLING_FROM:
        queue = "billing"
    elif ticket["replies"] >= TECH_REPLIES:
        queue = "tech"
    else:
        queue = "general"
    return {
        "queue": queue,
        "priority": priority,
        "escalate": priority == 1 and ticket["amount"] > ESCALATE_AMOUNT,
    }
