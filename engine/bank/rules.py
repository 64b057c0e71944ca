"""Bank's rule options (spec §15) and the preset `classic`."""

import json
from dataclasses import dataclass, fields, replace
from typing import Any

from engine.errors import GameError

DEFAULT_PRESET = "classic"
SEAT_COUNTS = (2, 3, 4)
# A served match must end: the deal cap ends every match by rule, and the target stays
# within what a long match of ordinary deals reaches.
MAX_TARGET_SCORE = 1000


def shown(value: object) -> str:
    """A value as the JSON the client sent, for messages."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return "a value that is not JSON"


class RulesError(GameError):
    """Rule options that are unknown or of a value the game does not allow; `path` is the
    option's name, `preset`, `rules` or `seats`."""


@dataclass(frozen=True, slots=True)
class Rules:
    preset: str = DEFAULT_PRESET
    target_score: int = 248
    dealer_rule: str = "loser"
    trump_mode: str = "per_player"
    after_seven: str = "skip"
    after_capture: str = "virtual_target"
    hand_penalty: bool = True
    penalty_mode: str = "hand_points"
    fixed_penalty: int = 31
    per_card_penalty: int = 3

    @classmethod
    def from_json(cls, data: object) -> "Rules":
        """Resolve `{"preset": ..., <overrides>}` into a validated Rules value.

        :raises RulesError: an unknown preset or option, or a value the option does not allow.
        """
        if not isinstance(data, dict):
            raise RulesError("rules", "must be an object")
        name = data.get("preset", DEFAULT_PRESET)
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError("preset", f"unknown preset {shown(name)}; known: {', '.join(PRESETS)}")
        overrides = {key: value for key, value in data.items() if key != "preset"}
        for key, value in overrides.items():
            check_option(key, value)
        return replace(PRESETS[name], **overrides)

    def to_json(self) -> dict[str, Any]:
        """The preset and every option resolved."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


def check_seats(seats: object) -> int:
    """The number of seats, if the game allows it.

    :raises RulesError: with path `seats`.
    """
    if type(seats) is not int or seats not in SEAT_COUNTS:
        raise RulesError("seats", f"must be 2, 3 or 4 players, got {shown(seats)}")
    return seats


def _boolean(value: object) -> bool:
    return type(value) is bool


def _count(minimum: int, maximum: float = float("inf")):
    return lambda value: type(value) is int and minimum <= value <= maximum


def _one_of(*allowed: object):
    return lambda value: type(value) is type(allowed[0]) and value in allowed


# Each option: (check, what the check demands) -- the demand is the error message.
OPTIONS: dict[str, tuple[Any, str]] = {
    "target_score": (
        _count(1, MAX_TARGET_SCORE), f"an integer from 1 to {MAX_TARGET_SCORE}"
    ),
    "dealer_rule": (
        _one_of("loser", "finisher", "starter", "max_points", "min_points"),
        '"loser", "finisher", "starter", "max_points" or "min_points"',
    ),
    "trump_mode": (
        _one_of("per_player", "none", "single", "double", "senior_junior"),
        '"per_player", "none", "single", "double" or "senior_junior"',
    ),
    "after_seven": (
        _one_of("skip", "draw_then_play", "skip_and_draw", "none"),
        '"skip", "draw_then_play", "skip_and_draw" or "none"',
    ),
    "after_capture": (
        _one_of("virtual_target", "free_lead", "turn_up"),
        '"virtual_target", "free_lead" or "turn_up"',
    ),
    "hand_penalty": (_boolean, "true or false"),
    "penalty_mode": (
        _one_of("hand_points", "fixed", "per_card"),
        '"hand_points", "fixed" or "per_card"',
    ),
    "fixed_penalty": (_one_of(15, 23, 31, 40, 48, 56), "one of 15, 23, 31, 40, 48, 56"),
    "per_card_penalty": (_one_of(3, 6), "3 or 6"),
}
assert set(OPTIONS) == {field.name for field in fields(Rules)} - {"preset"}


def check_option(name: str, value: object) -> None:
    """:raises RulesError: `name` is not an option, or `value` is not one it allows."""
    if name not in OPTIONS:
        raise RulesError(name, f"unknown rule option; known: {', '.join(OPTIONS)}")
    check, demand = OPTIONS[name]
    if not check(value):
        raise RulesError(name, f"must be {demand}, got {shown(value)}")


PRESETS: dict[str, Rules] = {DEFAULT_PRESET: Rules()}
