"""Support triage: ``triage(ticket)`` returns ``{"queue": ..., "priority": ..., "escalate": ...}`` for a ticket
(its plan, hours open, money at stake, replies so far and the customer's mood from -1 to 1). Each instance is 60
tickets labelled by a hidden handbook; the gap is the share of the three fields that differ from the
handbook's, in percent. A record without the three fields is refused (KeyError)."""

import random

FILE = "triage.py"
SHAPE = "record"
FUNCTION = "triage"
TARGET = 3.0
PARAMETERS = {
    "PLAN_WEIGHT['pro']": (0.0, 3.0),
    "PLAN_WEIGHT['enterprise']": (0.0, 3.0),
    "HOURS_WEIGHT": (0.0, 0.2),
    "AMOUNT_WEIGHT": (0.0, 0.01),
    "MOOD_WEIGHT": (0.0, 3.0),
    "URGENT": (0.0, 6.0),
    "NORMAL": (0.0, 6.0),
    "BILLING_FROM": (0.0, 1000.0),
    "TECH_REPLIES": (0, 10),
    "ESCALATE_AMOUNT": (0.0, 2000.0),
}
_PLAN = {"free": 0.0, "pro": 0.6, "enterprise": 1.5}


def _handbook(ticket):
    score = (
        _PLAN[ticket["plan"]] + 0.04 * ticket["hours_open"] + 0.002 * ticket["amount"] - 1.2 * ticket["mood"]
    )
    priority = 1 if score >= 3.2 else 2 if score >= 1.6 else 3
    escalate = priority == 1 and (ticket["amount"] > 400 or ticket["replies"] >= 4)
    queue = "billing" if ticket["amount"] >= 120 else "tech" if ticket["replies"] >= 2 else "general"
    return {"queue": queue, "priority": priority, "escalate": escalate}


def instance(seed):
    rng = random.Random(seed)
    tickets = []
    for _ in range(60):
        ticket = {
            "plan": rng.choice(["free", "free", "pro", "pro", "enterprise"]),
            "hours_open": round(rng.expovariate(1 / 20), 1),
            "amount": round(rng.choice([0.0, 0.0, rng.lognormvariate(4.5, 1.2)]), 2),
            "replies": min(12, int(rng.expovariate(1 / 2.5))),
            "mood": round(rng.uniform(-1, 1), 2),
        }
        tickets.append([ticket, _handbook(ticket)])
    return {"tickets": tickets}


def gap(triage, instance):
    wrong = 0
    for ticket, label in instance["tickets"]:
        record = triage(dict(ticket))
        wrong += sum(record[field] != label[field] for field in ("queue", "priority", "escalate"))
    return 100 * wrong / (3 * len(instance["tickets"]))
