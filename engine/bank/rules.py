"""Bank's rule options (spec §15) and the preset `classic`."""

from dataclasses import dataclass, fields, replace
from typing import Any

from engine import shapes
from engine.errors import RulesError, shown
from engine.fields import RulesMemo
from engine.shapes import Shape

DEFAULT_PRESET = "classic"
SEAT_COUNTS = (2, 3, 4)
# A served match must end: the deal cap ends every match by rule, and the target stays
# within what a long match of ordinary deals reaches.
MAX_TARGET_SCORE = 1000


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
        return MEMO.read(data, cls.resolve)

    @classmethod
    def resolve(cls, data: object) -> "Rules":
        """`from_json` without the memo: check every option, then apply the overrides."""
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
        """The preset and every option resolved (a fresh dict: callers own it)."""
        return dict(MEMO.json_of(self))


def check_seats(seats: object) -> int:
    """The number of seats, if the game allows it.

    :raises RulesError: with path `seats`.
    """
    if type(seats) is not int or seats not in SEAT_COUNTS:
        raise RulesError("seats", f"must be 2, 3 or 4 players, got {shown(seats)}")
    return seats


# Each option's declared shape: what a request may send, what a state echoes, what is checked.
OPTIONS: dict[str, Shape] = {
    "target_score": shapes.integer(1, MAX_TARGET_SCORE),
    "dealer_rule": shapes.choice("loser", "finisher", "starter", "max_points", "min_points"),
    "trump_mode": shapes.choice("per_player", "none", "single", "double", "senior_junior"),
    "after_seven": shapes.choice("skip", "draw_then_play", "skip_and_draw", "none"),
    "after_capture": shapes.choice("virtual_target", "free_lead", "turn_up"),
    "hand_penalty": shapes.boolean(),
    "penalty_mode": shapes.choice("hand_points", "fixed", "per_card"),
    "fixed_penalty": shapes.choice(15, 23, 31, 40, 48, 56),
    "per_card_penalty": shapes.choice(3, 6),
}
assert set(OPTIONS) == {field.name for field in fields(Rules)} - {"preset"}


def check_option(name: str, value: object) -> None:
    """:raises RulesError: `name` is not an option, or `value` is not one it allows."""
    if name not in OPTIONS:
        raise RulesError(name, f"unknown rule option; known: {', '.join(OPTIONS)}", list(OPTIONS))
    shape = OPTIONS[name]
    if not shapes.conforms(shape, value):
        reason = f"must be {shapes.demand(shape)}, got {shown(value)}"
        raise RulesError(name, reason, choices=shape.get("enum"))


PRESETS: dict[str, Rules] = {DEFAULT_PRESET: Rules()}
# Rules forms read and rules written, remembered.
MEMO = RulesMemo()
