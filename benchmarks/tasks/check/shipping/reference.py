"""Shipping rules of thumb: post when it arrives in time, courier when that does, express otherwise; insure
what goes by post when it is worth more than 200."""


def ship(order: dict) -> dict:
    if 1 + order["km"] // 300 <= order["days"]:
        carrier = "post"
    elif 1 + order["km"] // 600 <= order["days"]:
        carrier = "courier"
    else:
        carrier = "express"
    return {"carrier": carrier, "insure": carrier == "post" and order["value"] > 200}
