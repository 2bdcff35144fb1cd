"""A restocking policy, ``restock.toml``, read by the warehouse script: every ``review.every_days`` days, a
product whose stock on hand and on order is at or under its reorder point is ordered up to the reorder point
plus ``order.batch_days`` days of demand (in multiples of ``order.round_to``). The reorder point is
``reorder.cover`` times the demand expected over the lead time plus ``reorder.safety`` standard deviations of
it. Each instance is 6 products (daily demand 3-60, lead times 1-6 days, order costs 20-150) over 200 days;
the cost is 0.2 per unit held overnight, the order costs, and 5 per unit of demand missed. The gap is its excess
over the best reorder point and order-up-to level chosen per product with hindsight, in percent."""

import math
import random
import tomllib

FILE = "restock.toml"
SHAPE = "config"
TARGET = 15.0
PARAMETERS = {
    "reorder.cover": (0.5, 2.0),
    "reorder.safety": (0.0, 3.0),
    "order.batch_days": (0.0, 30.0),
    "order.round_to": (1, 50),
    "review.every_days": (1, 7),
}
HOLD, MISS, DAYS = 0.2, 5.0, 200


def load(text):
    return tomllib.loads(text)


def simulate(product, reorder, up_to, every=1, round_to=1):
    stock, pipeline, total = product["start"], [], 0.0
    for day, wanted in enumerate(product["demand"]):
        stock += sum(q for at, q in pipeline if at == day)
        pipeline = [(at, q) for at, q in pipeline if at > day]
        sold = min(stock, wanted)
        stock -= sold
        total += MISS * (wanted - sold)
        position = stock + sum(q for _, q in pipeline)
        if day % every == 0 and position <= reorder:
            quantity = math.ceil((up_to - position) / round_to) * round_to
            if quantity > 0:
                pipeline.append((day + product["lead"], quantity))
                total += product["order_cost"]
        total += HOLD * stock
    return total


def _hindsight(product):
    mean = sum(product["demand"]) / DAYS
    cover = mean * product["lead"]
    best = math.inf
    for s in range(0, 13):
        reorder = round(cover * s / 6)
        for q in (1, 2, 3, 5, 8, 12, 18, 25):
            best = min(best, simulate(product, reorder, reorder + round(q * mean)))
    return best


def instance(seed):
    rng = random.Random(seed)
    products = []
    for _ in range(6):
        mean, spread = rng.uniform(3, 60), rng.uniform(0.2, 0.8)
        demand = [max(0, round(rng.gauss(mean, spread * mean))) for _ in range(DAYS)]
        product = {
            "demand": demand,
            "lead": rng.randint(1, 6),
            "order_cost": round(rng.uniform(20, 150)),
            "start": round(mean * 3),
            "history": [max(0, round(rng.gauss(mean, spread * mean))) for _ in range(60)],
        }
        product["best"] = _hindsight(product)
        products.append(product)
    return {"products": products}


def gap(policy, instance):
    total = best = 0.0
    reorder, order, review = policy["reorder"], policy["order"], policy["review"]
    for product in instance["products"]:
        history = product["history"]
        mean = sum(history) / len(history)
        sd = math.sqrt(sum((d - mean) ** 2 for d in history) / len(history))
        point = reorder["cover"] * mean * product["lead"] + reorder["safety"] * sd * math.sqrt(
            product["lead"]
        )
        up_to = point + order["batch_days"] * mean
        total += simulate(product, point, up_to, review["every_days"], order["round_to"])
        best += product["best"]
    return 100 * (total - best) / best
