"""The rule options of Basra (spec §11) and the named presets (spec §12)."""

from dataclasses import dataclass, fields, replace
from typing import Any

from engine import shapes
from engine.errors import RulesError, one_of, shown
from engine.fields import RulesMemo
from engine.shapes import Shape

DECK_SIZE = 52
INITIAL_TABLE = 4
DEALT = DECK_SIZE - INITIAL_TABLE
DEFAULT_PRESET = "levantine"
SEAT_COUNTS = (2, 4)  # two players, or two partnerships of two (§10)
# A served match must end: no target beyond what a few dozen ordinary rounds reach, and
# never rules under which no side can score at all (the round cap ends the rest).
MAX_TARGET_SCORE = 1000
SCORING_OPTIONS = ("basra_points", "jack_basra_points", "majority_points", "card_points")


# Rules forms read and rules written, remembered.
MEMO = RulesMemo()


@dataclass(frozen=True, slots=True)
class Rules:
    preset: str = DEFAULT_PRESET
    seats_allowed: tuple[int, ...] = SEAT_COUNTS
    hand_size: int = 4
    initial_table_redeal: bool = True
    forced_capture: bool = True
    capture_policy: str = "max_cards"
    seven_diamonds_mode: str = "sweep"
    seven_diamonds_basra_max_sum: int = 10
    table_seven_diamonds: str = "plain"
    basra_points: int = 10
    jack_basra_points: int = 0
    last_card_basra_counts: bool = True
    majority_points: int = 30
    card_points: bool = True
    tie_policy: str = "void_round_carry"
    target_score: int = 121

    @classmethod
    def from_json(cls, data: object) -> "Rules":
        """Resolve `{"preset": ..., <overrides>}` into a validated Rules value (a form
        read once is remembered).

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
            raise RulesError(
                "preset",
                f"unknown preset {shown(name)}; choose {one_of(sorted(PRESETS))}",
                choices=sorted(PRESETS),
            )
        overrides = {key: value for key, value in data.items() if key != "preset"}
        for key, value in overrides.items():
            check_option(key, value)
        if "seats_allowed" in overrides:
            overrides["seats_allowed"] = tuple(sorted(set(overrides["seats_allowed"])))
        rules = replace(PRESETS[name], **overrides)
        for seats in rules.seats_allowed:
            rules.check_seats(seats)
        if not any(getattr(rules, option) for option in SCORING_OPTIONS):
            raise RulesError(
                "rules",
                f"no side could ever score: {one_of(SCORING_OPTIONS)} must give points",
                choices=SCORING_OPTIONS,
            )
        return rules

    def to_json(self) -> dict[str, Any]:
        """The preset and every option resolved."""
        written = MEMO.json_of(self)
        # A fresh dict and list each time: callers own what they are given.
        return {**written, "seats_allowed": list(self.seats_allowed)}

    def check_seats(self, seats: object) -> int:
        """The number of seats, if these rules allow it (raises RulesError otherwise)."""
        if type(seats) is not int or seats not in self.seats_allowed:
            raise RulesError(
                "seats",
                f"must be {one_of(self.seats_allowed)} with these rules, not {shown(seats)}",
                choices=self.seats_allowed,
            )
        if DEALT % (self.hand_size * seats):
            raise RulesError(
                "hand_size",
                f"{self.hand_size} cards to {seats} seats does not divide the {DEALT} dealt cards",
            )
        return seats


# Each option's declared shape: what a request may send, what a state echoes, what is checked.
OPTIONS: dict[str, Shape] = {
    "seats_allowed": shapes.array(
        shapes.choice(*SEAT_COUNTS), "the seat counts these rules can be played with", minItems=1
    ),
    "hand_size": shapes.choice(4, 6),
    "initial_table_redeal": shapes.boolean(),
    "forced_capture": shapes.boolean(),
    "capture_policy": shapes.choice("max_cards", "any_family"),
    "seven_diamonds_mode": shapes.choice("sweep", "wild", "plain"),
    "seven_diamonds_basra_max_sum": shapes.integer(minimum=1),
    "table_seven_diamonds": shapes.choice("plain", "lone_wild"),
    "basra_points": shapes.integer(minimum=0),
    "jack_basra_points": shapes.integer(minimum=0),
    "last_card_basra_counts": shapes.boolean(),
    "majority_points": shapes.integer(minimum=0),
    "card_points": shapes.boolean(),
    "tie_policy": shapes.choice("void_round_carry", "carry", "none"),
    "target_score": shapes.integer(1, MAX_TARGET_SCORE),
}
assert set(OPTIONS) == {field.name for field in fields(Rules)} - {"preset"}


def check_option(name: str, value: object) -> None:
    if name not in OPTIONS:
        raise RulesError(name, "unknown rule option", choices=list(OPTIONS))
    shape = OPTIONS[name]
    if not shapes.conforms(shape, value):
        reason = f"must be {shapes.demand(shape)}, not {shown(value)}"
        raise RulesError(name, reason, choices=shape.get("enum"))


PRESETS: dict[str, Rules] = {
    DEFAULT_PRESET: Rules(),
    "egyptian": Rules(
        preset="egyptian",
        seven_diamonds_mode="wild",
        table_seven_diamonds="lone_wild",
        jack_basra_points=20,
        card_points=False,
        tie_policy="none",
        target_score=101,
    ),
}
