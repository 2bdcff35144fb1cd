"""Heater control for one room."""


class Thermostat:
    """Called every minute with the room's temperature; answers with the heater's power, 0 to 100 percent."""

    GAIN = 1.0  # power per degree under the setpoint
    RESET = 0.0  # power per degree-minute under the setpoint, summed since the start
    DAMPING = 0.0  # power taken off per degree the room warmed since the last reading
    FEED = 0.0  # power per degree the setpoint is over the outside air

    def __init__(self) -> None:
        self.total = 0.0
        self.last: float | None = None

    def power(self, reading: float, setpoint: float, outside: float) -> float:
        error = setpoint - reading
        self.total += error
        warming = 0.0 if self.last is None else reading - self.last
        self.last = reading
        return (
            self.GAIN * error
            + self.RESET * self.total
            - self.DAMPING * warming
            + self.FEED * (setpoint - outside)
        )
