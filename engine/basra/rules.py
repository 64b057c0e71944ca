"""The rule options of Basra (spec §11) and the named presets (spec §12)."""

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from engine.errors import GameError

DECK_SIZE = 52
INITIAL_TABLE = 4
DEALT = DECK_SIZE - INITIAL_TABLE
DEFAULT_PRESET = "levantine"
SEAT_COUNTS = (2, 4)  # two players, or two partnerships of two (§10)


class RulesError(GameError):
    """Rule options that are unknown, of the wrong type or impossible together."""


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
        """Resolve `{"preset": ..., <overrides>}` into a validated Rules value."""
        if not isinstance(data, dict):
            raise RulesError("rules", "must be an object")
        name = data.get("preset", DEFAULT_PRESET)
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError("preset", f"unknown preset {name!r}; known: {sorted(PRESETS)}")
        overrides = {key: value for key, value in data.items() if key != "preset"}
        for key, value in overrides.items():
            check_option(key, value)
        if "seats_allowed" in overrides:
            overrides["seats_allowed"] = tuple(sorted(set(overrides["seats_allowed"])))
        rules = replace(PRESETS[name], **overrides)
        for seats in rules.seats_allowed:
            rules.check_seats(seats)
        return rules

    def to_json(self) -> dict[str, Any]:
        resolved = asdict(self)
        resolved["seats_allowed"] = list(self.seats_allowed)
        return resolved

    def check_seats(self, seats: object) -> None:
        if type(seats) is not int or seats not in self.seats_allowed:
            raise RulesError("seats", f"must be one of {list(self.seats_allowed)}, got {seats!r}")
        if DEALT % (self.hand_size * seats):
            raise RulesError(
                "hand_size",
                f"{self.hand_size} cards to {seats} seats does not divide the {DEALT} dealt cards",
            )


def _boolean(value: object) -> bool:
    return type(value) is bool


def _count(minimum: int):
    return lambda value: type(value) is int and value >= minimum


def _one_of(*allowed: object):
    return lambda value: value in allowed and type(value) is type(allowed[0])


def _seat_counts(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(type(seats) is int and seats in SEAT_COUNTS for seats in value)
    )


# Each option: (check, what the check demands) -- the demand is the error message.
OPTIONS: dict[str, tuple[Any, str]] = {
    "seats_allowed": (_seat_counts, f"a non-empty list drawn from {list(SEAT_COUNTS)}"),
    "hand_size": (_one_of(4, 6), "4 or 6"),
    "initial_table_redeal": (_boolean, "a boolean"),
    "forced_capture": (_boolean, "a boolean"),
    "capture_policy": (_one_of("max_cards", "any_family"), "'max_cards' or 'any_family'"),
    "seven_diamonds_mode": (_one_of("sweep", "wild", "plain"), "'sweep', 'wild' or 'plain'"),
    "seven_diamonds_basra_max_sum": (_count(1), "an integer >= 1"),
    "table_seven_diamonds": (_one_of("plain", "lone_wild"), "'plain' or 'lone_wild'"),
    "basra_points": (_count(0), "an integer >= 0"),
    "jack_basra_points": (_count(0), "an integer >= 0"),
    "last_card_basra_counts": (_boolean, "a boolean"),
    "majority_points": (_count(0), "an integer >= 0"),
    "card_points": (_boolean, "a boolean"),
    "tie_policy": (
        _one_of("void_round_carry", "carry", "none"),
        "'void_round_carry', 'carry' or 'none'",
    ),
    "target_score": (_count(1), "an integer >= 1"),
}
assert set(OPTIONS) == {field.name for field in fields(Rules)} - {"preset"}


def check_option(name: str, value: object) -> None:
    if name not in OPTIONS:
        raise RulesError(name, "unknown rule option")
    check, demand = OPTIONS[name]
    if not check(value):
        raise RulesError(name, f"must be {demand}, got {value!r}")


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
