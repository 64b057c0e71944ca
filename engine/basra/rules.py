"""The rule options of Basra (spec §11) and the named presets (spec §12)."""

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from engine.errors import GameError, one_of, shown

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
        return rules

    def to_json(self) -> dict[str, Any]:
        resolved = asdict(self)
        resolved["seats_allowed"] = list(self.seats_allowed)
        return resolved

    def check_seats(self, seats: object) -> None:
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


def _count(minimum: int):
    return lambda value: type(value) is int and value >= minimum


def _one_of(*allowed: object) -> tuple[Any, str, tuple[object, ...]]:
    def check(value: object) -> bool:
        return value in allowed and type(value) is type(allowed[0])

    return check, one_of(allowed), allowed


def _seat_counts(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(type(seats) is int and seats in SEAT_COUNTS for seats in value)
    )


def _demand(check: Any, demand: str) -> tuple[Any, str, None]:
    return check, demand, None


# Each option: (check, what the check demands in words, the allowed values when they are few).
OPTIONS: dict[str, tuple[Any, str, tuple[object, ...] | None]] = {
    "seats_allowed": _demand(_seat_counts, f"a non-empty list drawn from {one_of(SEAT_COUNTS)}"),
    "hand_size": _one_of(4, 6),
    "initial_table_redeal": _one_of(True, False),
    "forced_capture": _one_of(True, False),
    "capture_policy": _one_of("max_cards", "any_family"),
    "seven_diamonds_mode": _one_of("sweep", "wild", "plain"),
    "seven_diamonds_basra_max_sum": _demand(_count(1), "an integer >= 1"),
    "table_seven_diamonds": _one_of("plain", "lone_wild"),
    "basra_points": _demand(_count(0), "an integer >= 0"),
    "jack_basra_points": _demand(_count(0), "an integer >= 0"),
    "last_card_basra_counts": _one_of(True, False),
    "majority_points": _demand(_count(0), "an integer >= 0"),
    "card_points": _one_of(True, False),
    "tie_policy": _one_of("void_round_carry", "carry", "none"),
    "target_score": _demand(_count(1), "an integer >= 1"),
}
assert set(OPTIONS) == {field.name for field in fields(Rules)} - {"preset"}


def check_option(name: str, value: object) -> None:
    if name not in OPTIONS:
        raise RulesError(name, "unknown rule option", choices=list(OPTIONS))
    check, demand, allowed = OPTIONS[name]
    if not check(value):
        raise RulesError(name, f"must be {demand}, not {shown(value)}", choices=allowed)


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
