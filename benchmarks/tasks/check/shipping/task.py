"""Shipping rules: ``ship(order)`` returns ``{"carrier": ..., "insure": ...}`` for an order (its weight in kg,
distance in km, value and the days the customer allows). Three carriers price by weight and distance, take
their own number of days and lose their own share of parcels; a late parcel pays a penalty, an insured one a
premium instead of its expected loss. Each instance is 80 orders; the cost of a choice is its expected cost, and
the gap is the total over the cheapest choice per order, in percent. An unknown carrier is refused (KeyError)."""

import random

FILE = "shipping.py"
SHAPE = "record"
FUNCTION = "ship"
TARGET = 3.0
PARAMETERS = {
    "LIMITS['post_kg']": (0.0, 40.0),
    "LIMITS['post_km']": (0.0, 1500.0),
    "LIMITS['express_days']": (0, 7),
    "INSURE_FROM": (0.0, 3000.0),
    "HEAVY": ["post", "courier", "express"],
}
CARRIERS = {  # fee: base, per kg, per km; days: 1 + km // this; loss: share of parcels lost
    "post": {"base": 4.0, "kg": 0.6, "km": 0.004, "per_day": 300, "loss": 0.02},
    "courier": {"base": 9.0, "kg": 0.35, "km": 0.008, "per_day": 600, "loss": 0.008},
    "express": {"base": 18.0, "kg": 0.25, "km": 0.012, "per_day": 100_000, "loss": 0.003},
}


def cost(order, carrier, insure):
    terms = CARRIERS[carrier]
    fee = terms["base"] + terms["kg"] * order["kg"] + terms["km"] * order["km"]
    late = max(0, 1 + int(order["km"] // terms["per_day"]) - order["days"])
    risk = 2.0 + 0.01 * order["value"] if insure else terms["loss"] * order["value"]
    return fee + (30.0 + 10.0 * late if late else 0.0) + risk


def instance(seed):
    rng = random.Random(seed)
    orders = []
    for _ in range(80):
        order = {
            "kg": round(min(40.0, rng.lognormvariate(1.5, 0.9)), 1),
            "km": rng.randint(5, 1500),
            "value": round(rng.lognormvariate(5, 1.1), 2),
            "days": rng.choice([1, 2, 2, 3, 3, 4, 5, 7]),
        }
        best = min(cost(order, c, i) for c in CARRIERS for i in (False, True))
        orders.append([order, best])
    return {"orders": orders}


def gap(ship, instance):
    total = best = 0.0
    for order, cheapest in instance["orders"]:
        choice = ship(dict(order))
        total += cost(order, choice["carrier"], bool(choice["insure"]))
        best += cheapest
    return 100 * (total - best) / best
