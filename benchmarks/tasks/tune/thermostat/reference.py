"""Heater control: proportional on the error, a feed-forward of the heat loss, and an integral that stops
summing while the heater is at a limit (anti-windup)."""


class Thermostat:
    GAIN = 40.0
    RESET = 0.1
    FEED = 2.0

    def __init__(self) -> None:
        self.total = 0.0

    def power(self, reading: float, setpoint: float, outside: float) -> float:
        error = setpoint - reading
        raw = self.GAIN * error + self.RESET * (self.total + error) + self.FEED * (setpoint - outside)
        if 0.0 < raw < 100.0:
            self.total += error
        return raw
