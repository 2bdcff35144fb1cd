"""A room's heater controller, a class: ``Thermostat()`` is made once per day, and every minute
``power(reading, setpoint, outside)`` returns the heater's power in percent (clipped to 0-100) from a noisy
reading of the room's temperature. The room (heating rate and heat loss drawn per instance) follows
``T += rate * power - loss * (T - outside)`` each minute, for 12 hours of a cold day with the setpoint moving
between 17 and 22 degrees. The gap is the mean distance from the setpoint, as a percent of the mean distance
from the setpoint to the outside temperature (100%: a room left unheated)."""

import math
import random

FILE = "thermostat.py"
SHAPE = "class"
FUNCTION = "Thermostat"
TARGET = 3.0
PARAMETERS = {
    "Thermostat.GAIN": (0.0, 100.0),
    "Thermostat.RESET": (0.0, 5.0),
    "Thermostat.DAMPING": (0.0, 200.0),
    "Thermostat.FEED": (0.0, 10.0),
}
MINUTES = 720


def instance(seed):
    rng = random.Random(seed)
    loss = rng.uniform(0.01, 0.03)
    cold = rng.uniform(-8, 6)
    outside = [cold + 4 * math.sin(2 * math.pi * t / 1440 + rng.uniform(0, 0.1)) for t in range(MINUTES)]
    rate = loss * 30 / rng.uniform(55, 85)  # full power holds the room 30 degrees over the outside air
    setpoint, level = [], rng.choice([17.0, 20.0, 21.0])
    for t in range(MINUTES):
        if t % 120 == 0 and t:
            level = rng.choice([17.0, 19.0, 20.0, 21.0, 22.0])
        setpoint.append(level)
    noise = [round(rng.gauss(0, 0.15), 3) for _ in range(MINUTES)]
    return {
        "rate": rate,
        "loss": loss,
        "outside": outside,
        "setpoint": setpoint,
        "noise": noise,
        "start": cold + 2,
    }


def gap(thermostat, instance):
    controller = thermostat()
    temperature, error, need = instance["start"], 0.0, 0.0
    for t in range(MINUTES):
        outside, setpoint = instance["outside"][t], instance["setpoint"][t]
        power = controller.power(temperature + instance["noise"][t], setpoint, outside)
        power = min(100.0, max(0.0, float(power)))
        temperature += instance["rate"] * power - instance["loss"] * (temperature - outside)
        error += abs(temperature - setpoint)
        need += abs(setpoint - outside)
    return 100 * error / need
