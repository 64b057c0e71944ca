"""How a game declares its shapes — rule options, state, view, move, legal move, events —
as plain JSON-Schema data (2020-12 keywords, the subset OpenAPI 3.1 reads), so that the
service derives its request checks and openapi.yaml from them and the engine checks rule
options against the very same declaration.

The helpers build the few forms the games use; `conforms` and `demand` read an option's
shape (type, enum, bounds, array items) to check a value and to say in words what it must
be. References between a game's own shapes are `ref("Name")`, resolved by the service
against the game's component names (`{"$ref": "#/components/schemas/<Title><Name>"}`).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.errors import one_of

Shape = dict[str, Any]
# Every form engine/cards.py `parse_card` reads.
CARD_PATTERN = "^(?:[A2-9TJQKatjqk]|10)[CDHScdhs]$"
# The JSON type a `choice` of values of each Python type declares,
KINDS = {bool: "boolean", int: "integer", float: "number", str: "string"}
# and every JSON type such a value has: an integer is a number too.
TYPES = {type_: (kind, "number") if kind == "integer" else (kind,) for type_, kind in KINDS.items()}
# A seed is any string up to this long: it is stored with each session and its state, so a
# client cannot make either as large as it likes.
MAX_SEED_LENGTH = 128
# The marker of a reference to another shape of the same game, resolved by the service.
REF = "$game_ref"


@dataclass(frozen=True, slots=True)
class GameShapes:
    """Every shape of one game: `state` (what `write` gives and `read` takes), `view` (what
    one seat sees), `move` (what `read_move` accepts), `legal_move` (what `write_move`
    gives), `side_score` (one entry of `score`), `events` (one closed object per event
    type, its `type` a `const`), `named`: the parts they refer to with `ref(name)`, and
    `options`: each rule option's shape, the very declaration the game's rules check
    values against. A state refers to its resolved rules as `ref("ResolvedRules")` and a
    score entry as `ref("SideScore")`, which the service builds."""

    options: Mapping[str, Shape]
    state: Shape
    view: Shape
    move: Shape
    legal_move: Shape
    side_score: Shape
    events: tuple[Shape, ...]
    named: Mapping[str, Shape] = field(default_factory=dict)


def choice(*values: object, description: str = "") -> Shape:
    """One of a few values of one JSON type."""
    return described({"type": KINDS[type(values[0])], "enum": list(values)}, description)


def integer(minimum: int | None = None, maximum: int | None = None, description: str = "") -> Shape:
    shape: Shape = {"type": "integer"}
    if minimum is not None:
        shape["minimum"] = minimum
    if maximum is not None:
        shape["maximum"] = maximum
    return described(shape, description)


def boolean(description: str = "") -> Shape:
    return described({"type": "boolean"}, description)


def string(description: str = "", **more: Any) -> Shape:
    return described({"type": "string", **more}, description)


def seed(description: str = "") -> Shape:
    """A seed: any string of at most MAX_SEED_LENGTH characters."""
    return string(description, maxLength=MAX_SEED_LENGTH)


def const(value: str, description: str = "") -> Shape:
    """Exactly this string (an event's `type`, a state's `game`)."""
    return described({"type": "string", "const": value}, description)


def card(description: str = "") -> Shape:
    """A card: rank then suit (`7D`, `TD`); input also takes `10d`, `7d`."""
    return described(
        {"type": "string", "pattern": CARD_PATTERN, "examples": ["7D", "TD"]}, description
    )


def cards(description: str = "", **bounds: int) -> Shape:
    return array(card(), description, **bounds)


def array(items: Shape, description: str = "", **bounds: int) -> Shape:
    """A list of `items`; `bounds` are minItems / maxItems."""
    return described({"type": "array", "items": items, **bounds}, description)


def nullable(shape: Shape) -> Shape:
    """`shape` or null."""
    kind = shape.get("type")
    if isinstance(kind, str) and REF not in shape:
        widened = {**shape, "type": [kind, "null"]}
        if "enum" in shape:
            widened["enum"] = [*shape["enum"], None]
        return widened
    return {"anyOf": [shape, {"type": "null"}]}


def ref(name: str, description: str = "") -> Shape:
    """Another shape of the same game, by its name in the game's `Shapes.named`."""
    return described({REF: name}, description)


def obj(
    properties: Mapping[str, Shape], optional: tuple[str, ...] = (), description: str = ""
) -> Shape:
    """A closed object: every property required but the `optional` ones, no other key."""
    shape: Shape = {
        "type": "object",
        "properties": dict(properties),
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
    }
    return described(shape, description)


def described(shape: Shape, description: str) -> Shape:
    return {**shape, "description": description} if description else shape


def conforms(shape: Shape, value: object) -> bool:
    """Whether `value` has the option shape `shape` (type, enum, bounds, array items and
    length, string length and pattern: every keyword the helpers write, so that no option
    is taken that openapi.yaml says is refused); JSON's types: a boolean is not an integer.
    An array is a list, or from Python a tuple, which orjson writes as one (so the rules
    memo, keyed by that text, reads them alike)."""
    kind = shape["type"]
    if kind == "array":
        if not isinstance(value, (list, tuple)) or not within(shape, "Items", len(value)):
            return False
        return all(conforms(shape["items"], item) for item in value)
    if kind not in TYPES.get(type(value), ()):
        return False
    if "enum" in shape and value not in shape["enum"]:
        return False
    if kind == "string":
        text = str(value)
        # JSON Schema's pattern matches anywhere in the string unless anchored.
        pattern = shape.get("pattern")
        return within(shape, "Length", len(text)) and (
            pattern is None or re.search(pattern, text) is not None
        )
    if "minimum" in shape and value < shape["minimum"]:  # type: ignore[operator]
        return False
    return not ("maximum" in shape and value > shape["maximum"])  # type: ignore[operator]


def within(shape: Shape, what: str, size: int) -> bool:
    """Whether `size` is within the shape's `min<what>` and `max<what>` (Items, Length)."""
    return shape.get(f"min{what}", 0) <= size <= shape.get(f"max{what}", size)


def demand(shape: Shape) -> str:
    """What a value of `shape` must be, in words: `4 or 6`, `an integer from 1 to 1000`."""
    kind = shape["type"]
    if kind == "array":
        return f"{sized('a list', 'items', shape, 'Items')} drawn from {demand(shape['items'])}"
    if "enum" in shape:
        return one_of(shape["enum"])
    if kind == "boolean":
        return "true or false"
    if kind in ("integer", "number"):
        some = "an integer" if kind == "integer" else "a number"
        low, high = shape.get("minimum"), shape.get("maximum")
        if low is not None and high is not None:
            return f"{some} from {low} to {high}"
        if low is not None:
            return f"{some} >= {low}"
        return some if high is None else f"{some} <= {high}"
    if kind == "string":
        described = sized("a string", "characters", shape, "Length")
        pattern = shape.get("pattern")
        return described if pattern is None else f"{described} matching {pattern}"
    return f"a {kind}"


def sized(what: str, unit: str, shape: Shape, keyword: str) -> str:
    """`what` with the bounds of its size in words: `a list of 1 to 4 items`."""
    low, high = shape.get(f"min{keyword}", 0), shape.get(f"max{keyword}")
    if high is not None:
        return f"{what} of {low} to {high} {unit}" if low else f"{what} of at most {high} {unit}"
    if low == 1 and keyword == "Items":
        return f"a non-empty {what.removeprefix('a ')}"
    return f"{what} of at least {low} {unit}" if low else what
