"""Reading the fields of a state's JSON form, for every game: each reader returns the value
or raises StateError naming the field's dotted path (`hands.1.3`, `target.by`) and what it
must be, so every game's states are refused in the same words."""

import dataclasses
from collections.abc import Callable, Collection
from functools import cache, partial
from itertools import chain
from typing import Any, Literal, overload

import orjson

from engine.cards import CardError, parse_card
from engine.errors import GameError, StateError, shown
from engine.shapes import MAX_SEED_LENGTH


def keys_of(
    data: object,
    required: tuple[str, ...],
    optional: tuple[str, ...] = (),
    game: str | None = None,
) -> dict:
    """`data` as a state object: every required key there, no key unknown. When its keys are
    wrong but it names a `game` other than `game`, that is what is wrong with it (another
    game's state lacks this game's keys)."""
    if not isinstance(data, dict):
        raise StateError("state", "must be an object")
    names = tuple(data)
    if names == required or names == required + optional:
        return data  # the keys in the order the engine writes them: compared in one go
    if data.keys() >= key_set(required) and (
        len(data) == len(required) or key_set(required + optional).issuperset(data)
    ):
        return data  # every required key there, and no other but the optional ones
    if game is not None and "game" in data and data["game"] != game:
        raise StateError("game", f"must be {shown(game)}, not {shown(data['game'])}")
    missing = [key for key in required if key not in data]
    if missing:
        raise StateError(missing[0], "is required")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise StateError(unknown[0], "is not a field of this game's state")
    return data


@cache
def key_set(keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(keys)


def record(value: object, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """An object with at least `keys` (nested records: an entry of a pile, a target)."""
    if not isinstance(value, dict):
        raise StateError(path, f"must be an object with {', '.join(keys)}")
    for key in keys:
        if key not in value:
            raise StateError(f"{path}.{key}", "is required")
    return value


def integer(
    value: object, path: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An integer (never a boolean) within the bounds given."""
    if type(value) is not int:
        raise StateError(path, f"must be an integer, not {shown(value)}")
    if minimum is not None and value < minimum:
        raise StateError(path, f"must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise StateError(path, f"must be at most {maximum}, not {value}")
    return value


def boolean(value: object, path: str) -> bool:
    if type(value) is not bool:
        raise StateError(path, f"must be true or false, not {shown(value)}")
    return value


def text(value: object, path: str, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise StateError(path, "must be a string")
    return value


def seed(value: object, path: str) -> str | None:
    """A state's seed: absent, or a string of at most MAX_SEED_LENGTH characters."""
    found = text(value, path, nullable=True)
    if found is not None and len(found) > MAX_SEED_LENGTH:
        raise StateError(path, f"must be at most {MAX_SEED_LENGTH} characters")
    return found


def one_value(value: object, path: str, allowed: tuple[str, ...]) -> str:
    """One of a few strings (a status, a finish type)."""
    if value not in allowed:
        raise StateError(path, f"must be one of {', '.join(allowed)}, not {shown(value)}")
    return value  # type: ignore[return-value]


@overload
def seat(value: object, seats: int, path: str, nullable: Literal[False] = False) -> int: ...
@overload
def seat(value: object, seats: int, path: str, nullable: bool) -> int | None: ...
def seat(value: object, seats: int, path: str, nullable: bool = False) -> int | None:
    """A seat index below `seats` (or null when `nullable`)."""
    if value is None and nullable:
        return None
    if type(value) is not int or not 0 <= value < seats:
        allowed = f"a seat from 0 to {seats - 1}" + (" or null" if nullable else "")
        raise StateError(path, f"must be {allowed}, not {shown(value)}")
    return value


def ascending_seats(value: object, seats: int, path: str) -> tuple[int, ...]:
    """Distinct seats in ascending order."""
    if value == []:
        return ()  # no seat: nothing to read or order
    if not isinstance(value, list):
        raise StateError(path, "must be a list of seats")
    read = tuple(seat(item, seats, f"{path}.{index}") for index, item in enumerate(value))
    if list(read) != sorted(set(read)):
        raise StateError(path, "must list distinct seats in ascending order")
    return read


def card(
    value: object, path: str, pack: Collection[str], error: type[GameError] = StateError
) -> str:
    """A card of `pack` in any accepted input form, in its canonical form; `error` is the
    kind raised (a move's card is not a state's)."""
    try:
        read = parse_card(value)
    except CardError:
        raise error(path, f"{shown(value)} is not a card") from None
    if read not in pack:
        raise error(path, f"{read} is not a card of this game's {len(pack)}-card pack")
    return read


def cards(value: object, path: str, pack: frozenset[str]) -> tuple[str, ...]:
    """A list of cards of `pack`."""
    if type(value) is list:
        try:
            if pack.issuperset(value):
                return tuple(value)  # every card already in its canonical form
        except TypeError:
            pass  # something unhashable: the careful reading below names it
    if not isinstance(value, list):
        raise StateError(path, "must be a list of cards")
    return tuple(card(item, f"{path}.{index}", pack) for index, item in enumerate(value))


def card_lists(
    value: object, size: int, path: str, pack: frozenset[str], each: str
) -> tuple[tuple[str, ...], ...]:
    """`size` lists of cards of `pack` (one per seat: hands, captured piles)."""
    if type(value) is list and len(value) == size and set(map(type, value)) == {list}:
        try:
            if pack.issuperset(chain.from_iterable(value)):
                return tuple(map(tuple, value))  # every card already in its canonical form
        except TypeError:
            pass  # something unhashable: the careful reading below names it
    return listed(value, size, path, lambda item, at: cards(item, at, pack), each)


def whole_pack(piles: list[Any], pack: frozenset[str]) -> bool:
    """Whether `piles` are lists holding every card of `pack` exactly once, each in its
    canonical form: the cards of a state as the engine writes it, checked in C with no
    Python call per card (a fresh card's hash computed once). When not, the careful
    readers name what is wrong."""
    if set(map(type, piles)) != {list}:
        return False
    every = [*chain.from_iterable(piles)]
    try:
        return len(every) == len(pack) and set(every) == pack  # all the pack's, none twice
    except TypeError:
        return False  # something unhashable


def integers(
    value: object, size: int, path: str, each: str, minimum: int | None = None
) -> tuple[int, ...]:
    """`size` integers of at least `minimum` (one per seat or side: scores)."""
    if (
        type(value) is list
        and len(value) == size
        and set(map(type, value)) == {int}
        and (minimum is None or min(value) >= minimum)
    ):
        return tuple(value)
    return listed(value, size, path, partial(integer, minimum=minimum), each)


def are_seats(values: Collection[object], seats: int) -> bool:
    """Whether every value is a seat below `seats` (an int, never a bool): a check without
    a path or a Python call per value, for the plain form; its careful reader names what
    is wrong."""
    return set(map(type, values)) <= {int} and seat_set(seats).issuperset(values)


@cache
def seat_set(seats: int) -> frozenset[int]:
    return frozenset(range(seats))


def listed(
    value: object, size: int, path: str, read: Callable[[object, str], Any], each: str
) -> tuple:
    """A list of exactly `size` entries (one per seat, one per side), each read by `read`."""
    if not isinstance(value, list) or len(value) != size:
        raise StateError(path, f"must be a list with one entry per {each} ({size})")
    return tuple(read(item, f"{path}.{index}") for index, item in enumerate(value))


def under_rules(error: GameError) -> StateError:
    """A rules or seats error met in a state's `rules` or `seats`, named under the state."""
    path = error.path if error.path in ("rules", "seats") else f"rules.{error.path}"
    return StateError(path, error.reason, error.choices)


def memo_key(form: object) -> bytes | None:
    """A key equal only for JSON forms that read alike: the form's text as orjson writes it
    (in C, a few times cheaper than a tuple of names, values and their types), which keeps
    JSON's types apart as Python's equality does not (`true` is not `1`, `2.0` not `2`);
    None for what is not an object, or a tuple of fields, of JSON's values (a subclass of
    str or int included). A Python tuple is written as a list, and `shapes.conforms` reads
    it as one."""
    if type(form) is not dict and type(form) is not tuple:
        return None
    try:
        return orjson.dumps(form, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:  # orjson.JSONEncodeError: a value JSON does not hold
        return None


class FormMemo:
    """What valid JSON forms read to, remembered under their `memo_key`: forms that recur
    (the rules every state carries, the trumps of a deal) are read once. Only what read
    without an error is kept, so every entry is small. Bounded: emptied when full, so a
    client sending ever new forms costs only its own reads, and the forms that recur come
    back at once."""

    SIZE = 256

    def __init__(self) -> None:
        self.found: dict[bytes, Any] = {}

    def read(self, form: object, read: Callable[[Any], Any]) -> Any:
        """`read(form)`, remembered under the form's `memo_key`."""
        key = memo_key(form)
        found = self.found.get(key) if key is not None else None
        if found is None:
            found = read(form)
            if key is not None:
                self.keep(self.found, key, found)
        return found

    def keep(self, table: dict[Any, Any], key: Any, value: Any) -> None:
        """`value` kept in `table` under `key`, the table emptied first when full."""
        if len(table) >= self.SIZE:
            table.clear()
        table[key] = value


class RulesMemo(FormMemo):
    """A game's valid rules forms already read (every state carries its rules, so the rules
    a service sees are few and recur), and the JSON of rules already written."""

    def __init__(self) -> None:
        super().__init__()
        self.written: dict[int, tuple[Any, dict[str, Any]]] = {}

    def json_of(self, rules: Any) -> dict[str, Any]:
        """Every option of `rules` (a dataclass) by name, remembered by identity (cheaper
        than hashing every option: the entry keeps its rules alive, so the id cannot pass
        to another object). The caller must copy what it hands out."""
        remembered = self.written.get(id(rules))
        if remembered is not None and remembered[0] is rules:
            return remembered[1]
        written = {field.name: getattr(rules, field.name) for field in dataclasses.fields(rules)}
        self.keep(self.written, id(rules), (rules, written))
        return written
