"""The rule options: declared once as shapes, checked against the same declarations."""

from dataclasses import dataclass, fields, replace
from typing import Any

from engine import shapes
from engine.errors import RulesError, shown

DEFAULT_PRESET = "plain"
SEAT_COUNTS = (2, 3, 4)

OPTIONS: dict[str, shapes.Shape] = {
    "trick_points": shapes.integer(1, 10, "points for each trick taken"),
    "last_trick_bonus": shapes.choice(0, 5, 10, description="extra points for the last trick"),
}


@dataclass(frozen=True, slots=True)
class Rules:
    preset: str = DEFAULT_PRESET
    trick_points: int = 1
    last_trick_bonus: int = 0

    @classmethod
    def from_json(cls, data: object) -> "Rules":
        if not isinstance(data, dict):
            raise RulesError("rules", "must be an object")
        name = data.get("preset", DEFAULT_PRESET)
        if name not in PRESETS:
            raise RulesError("preset", f"unknown preset {shown(name)}", sorted(PRESETS))
        overrides = {key: value for key, value in data.items() if key != "preset"}
        for key, value in overrides.items():
            if key not in OPTIONS:
                raise RulesError(key, "unknown rule option", list(OPTIONS))
            if not shapes.conforms(OPTIONS[key], value):
                demand = shapes.demand(OPTIONS[key])
                raise RulesError(key, f"must be {demand}, not {shown(value)}")
        return replace(PRESETS[name], **overrides)

    def to_json(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


def check_seats(seats: object) -> int:
    if type(seats) is not int or seats not in SEAT_COUNTS:
        raise RulesError("seats", f"must be 2, 3 or 4, not {shown(seats)}", SEAT_COUNTS)
    return seats


PRESETS = {DEFAULT_PRESET: Rules(), "bonus": Rules(preset="bonus", last_trick_bonus=10)}
