"""Shipping rules: which carrier takes an order, and whether it is insured."""

LIMITS = {"post_kg": 10.0, "post_km": 1000.0, "express_days": 1}
INSURE_FROM = 1000.0
HEAVY = "express"


def ship(order: dict) -> dict:
    if order["days"] <= LIMITS["express_days"]:
        carrier = "express"
    elif order["kg"] <= LIMITS["post_kg"] and order["km"] <= LIMITS["post_km"]:
        carrier = "post"
    else:
        carrier = HEAVY
    return {"carrier": carrier, "insure": order["value"] >= INSURE_FROM}
