"""Each game's components of openapi.yaml and its move check, derived from the shapes the
game declares (engine/shapes.py `GameShapes`, the game's `shapes`): nothing here names a
game, so a new game is documented and checked by being registered.

A game `bank` gives `BankState`, `BankView`, `BankMove`, `BankLegalMove`, `BankSideScore`,
`BankRules` (a request's preset and overrides), `BankResolvedRules` (what a state echoes),
one component per event type (`BankLayEvent`...) and per part it names (`BankTrumps`...),
`BankEvent` (any of its events, told apart by `type`), and for hosted sessions the same
events tagged with their version (`BankLaySessionEvent`...), `BankSessionEvent` and the
game's session answers (`BankSessionResponse`, `BankSessionMoveResponse`).
"""

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jsonschema_rs

from engine.game import Game
from engine.shapes import MAX_SEED_LENGTH, REF, Shape, array, choice, obj, string
from engine.shapes import ref as game_ref

SCHEMAS = "#/components/schemas/"


def title_of(game: str) -> str:
    """The prefix of a game's component names: `basra` -> `Basra`."""
    return "".join(part.capitalize() for part in game.replace("-", "_").split("_"))


def ref(name: str) -> Shape:
    return {"$ref": f"{SCHEMAS}{name}"}


def resolved(shape: Any, title: str) -> Any:
    """`shape` with each reference to another shape of the game (`ref("Trumps")`) made a
    $ref to the game's component (`BankTrumps`), and its properties in generator-safe order
    (`generator_safe`)."""
    if isinstance(shape, dict):
        if REF in shape:
            target = ref(f"{title}{shape[REF]}")
            return {**target, **{k: v for k, v in shape.items() if k != REF}}
        found = {key: resolved(value, title) for key, value in shape.items()}
        if isinstance(found.get("properties"), dict):
            found["properties"] = generator_safe(found["properties"])
        return found
    if isinstance(shape, list):
        return [resolved(item, title) for item in shape]
    return shape


# openapi-python-client (0.29) reads an object into a local `d` and names each property's
# value after the property: a property called `d` (Bank's suit D in `trumps.common`) would
# overwrite the object before the properties after it are read. Declared last, it is read
# last (the generator reads required properties before optional ones, so a required `d`
# beside optional properties would still break it; no game declares one).
SHADOWED = "d"


def generator_safe(properties: dict[str, Any]) -> dict[str, Any]:
    """`properties` with the one whose Python name would be `d` declared last (the wire format
    and the required list do not change)."""
    last = [name for name in properties if name.lower() == SHADOWED]
    return {
        **{name: shape for name, shape in properties.items() if name not in last},
        **{name: properties[name] for name in last},
    }


def inlined(shape: Any, named: Mapping[str, Shape]) -> Any:
    """`shape` with every reference replaced by the shape it names (for a validator that
    sees one shape alone)."""
    if isinstance(shape, dict):
        if REF in shape:
            return inlined(named[shape[REF]], named)
        return {key: inlined(value, named) for key, value in shape.items()}
    if isinstance(shape, list):
        return [inlined(item, named) for item in shape]
    return shape


def event_type(event: Shape) -> str:
    """The one `type` an event shape declares."""
    return event["properties"]["type"]["const"]


def event_name(title: str, event: Shape, session: bool = False) -> str:
    """`BankTurnUpEvent`, or `BankTurnUpSessionEvent` for the version-tagged form."""
    camel = "".join(part.capitalize() for part in event_type(event).split("_"))
    return f"{title}{camel}{'Session' if session else ''}Event"


def tagged_union(names: Iterable[str], tag: str, values: Iterable[str]) -> Shape:
    """Exactly one of these components, told apart by the value of their field `tag` (an
    explicit mapping, so that typed clients take the tag values, not the component names)."""
    names = list(names)
    return {
        "oneOf": [ref(name) for name in names],
        "discriminator": {
            "propertyName": tag,
            "mapping": {value: f"{SCHEMAS}{name}" for value, name in zip(values, names)},
        },
    }


VERSION = {"type": "integer", "minimum": 1, "description": "the move's version"}
TIMEOUT_EVENT = obj(
    {
        "type": {"type": "string", "const": "timeout"},
        "seat": {"type": "integer", "minimum": 0, "description": "the seat played for"},
        "absent": {
            "type": "boolean",
            "description": "true when the seat is absent (played at once, no wait)",
        },
        "version": VERSION,
    },
    optional=("absent",),
    description="The server played for a seat: its time ran out, or it is absent. It leads "
    "the events of that version, the move's own events follow.",
)


def session_event(event: Shape) -> Shape:
    """An event as a seat of a hosted session receives it: tagged with its move's version."""
    properties = {**event["properties"], "version": VERSION}
    return {**event, "properties": properties, "required": [*event["required"], "version"]}


def rules_request(game: Game) -> Shape:
    """A preset and any options overriding it; the game checks them against the same
    declarations."""
    catalogue = game.catalogue()
    defaults = ", ".join(
        f"{name} (default {json.dumps(value)})" for name, value in catalogue["options"].items()
    )
    return obj(
        {
            "preset": string(
                "a preset name (see GET /v1/games)", enum=sorted(catalogue["presets"])
            ),
            **{name: requested(option) for name, option in game.shapes.options.items()},
        },
        optional=("preset", *game.shapes.options),
        description="A preset and any rule options that override it; GET /v1/games lists them "
        f"all. Default {json.dumps({'preset': catalogue['default_preset']})}. Options: "
        f"{defaults}. A state echoes every resolved option.",
    )


def requested(option: Shape) -> Shape:
    """An option as a request sends it: a list option that cannot be empty reads as left out
    given as [] (service/requests.py), so that the clients OpenAPI Generator makes for java,
    which write a list left unset as [], can send rules."""
    if not never_empty(option):
        return option
    shape = {key: value for key, value in option.items() if key != "minItems"}
    said = [option["description"]] if "description" in option else []
    return {**shape, "description": "; ".join([*said, "[] reads as left out"])}


def never_empty(option: Mapping[str, Any]) -> bool:
    """Whether a rule option's shape is a list of at least one item."""
    return option.get("type") == "array" and option.get("minItems", 0) > 0


def resolved_rules(game: Game) -> Shape:
    """The rules a state or a view echoes: the preset and every option, resolved."""
    presets = sorted(game.catalogue()["presets"])
    return obj(
        {"preset": choice(*presets), **game.shapes.options},
        description="The preset and every option resolved.",
    )


def catalogue_entry(game: Game) -> Shape:
    """The game's entry of GET /v1/games: its seat counts, presets and option defaults."""
    catalogue = game.catalogue()
    presets = catalogue["presets"]
    return obj(
        {
            "name": {"type": "string", "const": game.name},
            "seats": array(choice(*catalogue["seats"])),
            "default_preset": choice(*presets),
            "presets": obj(
                {name: game_ref("ResolvedRules") for name in presets},
                description="each preset with every option resolved",
            ),
            "options": obj(game.shapes.options, description="every rule option with its default"),
        }
    )


def game_components(game: Game) -> dict[str, Shape]:
    """Every component of `game` derived from its declared shapes, by name."""
    title, shapes = title_of(game.name), game.shapes
    own = {
        "Catalogue": catalogue_entry(game),
        "State": bounded_seed(shapes.state),
        "View": shapes.view,
        "Move": shapes.move,
        "LegalMove": shapes.legal_move,
        "SideScore": shapes.side_score,
        "Rules": rules_request(game),
        "ResolvedRules": resolved_rules(game),
        **shapes.named,
    }
    found = {f"{title}{name}": resolved(shape, title) for name, shape in own.items()}
    types = [event_type(event) for event in shapes.events]
    for event in shapes.events:
        found[event_name(title, event)] = resolved(event, title)
        found[event_name(title, event, session=True)] = resolved(session_event(event), title)
    found[f"{title}Event"] = tagged_union(
        (event_name(title, event) for event in shapes.events), "type", types
    )
    found[f"{title}SessionEvent"] = tagged_union(
        [*(event_name(title, event, session=True) for event in shapes.events), "TimeoutEvent"],
        "type",
        [*types, "timeout"],
    )
    return found


def bounded_seed(state: Shape) -> Shape:
    """A state's shape with its string `seed` bounded as the service reads it
    (service.requests.read_state), when the game declared no bound of its own."""
    seed = state.get("properties", {}).get("seed")
    if not isinstance(seed, dict) or seed.get("type") != "string" or "maxLength" in seed:
        return state
    return {
        **state,
        "properties": {**state["properties"], "seed": {**seed, "maxLength": MAX_SEED_LENGTH}},
    }


def standalone(game: Game, shape: Shape) -> Shape:
    """`shape` of `game` with every reference inlined, for a validator of that shape alone."""
    named = {
        **game.shapes.named,
        "ResolvedRules": resolved_rules(game),
        "SideScore": game.shapes.side_score,
    }
    return inlined(shape, named)


@cache
def move_validator(game: Game) -> Any:
    """The JSON Schema validator of `game`'s move as sent, built once per game: kept by the
    game, not by its name, which another package may register again with other moves."""
    return jsonschema_rs.validator_for(standalone(game, game.shapes.move))


def move_errors(game: Game, data: object) -> dict[str, list[str]]:
    """What is wrong with `data` as a move of `game`, by JSON path within the move ("" for
    the move itself; {} when it has the move's shape); the game then reads it."""
    validator = move_validator(game)
    if validator.is_valid(data):
        return {}
    errors: dict[str, list[str]] = {}
    for error in validator.iter_errors(data):
        path = ".".join(map(str, error.instance_path))
        kind = error.kind
        if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
            errors.setdefault(joined(path, kind.property), []).append("is required")
        elif isinstance(kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties):
            for unexpected in kind.unexpected:
                errors.setdefault(joined(path, unexpected), []).append("is not a field of a move")
        else:
            errors.setdefault(path, []).append(error.message)
    return errors


def joined(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def any_game_event(value: str, components: Mapping[str, Shape]) -> Shape | None:
    """One object that reads the `value` event of every game in `components` (its session
    events of that type, by component name): every field of each, those some game's event
    lacks optional, a field the games declare apart widened to take each game's values;
    None when a field is of another kind in one game than in another (a game's own events
    then stay members each).

    For the list of events whose game the document cannot say (the long poll's, an anyOf:
    a client takes the first member that reads an event). Games share some `type` values
    (`capture`, `deal`...): with each game's event of such a type a member of its own,
    OpenAPI Generator's java client (native), which tells members apart by `type` alone,
    read one game's capture as the other's, dropping its fields. (A union of the games'
    unions: its go client did not compile. A oneOf told apart by `type`: its go client,
    which ignores the discriminator, finds events alike but for their type, such as `pass`
    and `skip`, in several members.)"""
    shapes = list(components.values())
    names = list(dict.fromkeys(name for shape in shapes for name in shape["properties"]))
    try:
        properties = {name: widened([each["properties"][name] for each in shapes
                                     if name in each["properties"]])
                      for name in names}  # fmt: skip
    except Apart:
        return None
    everywhere = [name for name in names if all(name in shape["required"] for shape in shapes)]
    listed = ", ".join(components)
    return {
        "type": "object",
        "properties": properties,
        "required": everywhere,
        "additionalProperties": False,
        "description": f"A `{value}` event of any game: {listed} (the fields of each, those "
        "another game's event has not optional).",
    }


class Apart(Exception):
    """Games declare a field of one name as different kinds of value."""


def widened(shapes: list[Shape]) -> Shape:
    """A field's shape that takes what each of `shapes` takes (they differ in bounds,
    nullability or description only; Apart when they differ in anything else)."""
    first = shapes[0]
    if all(shape == first for shape in shapes):
        return first
    kinds = [shape.get("type") for shape in shapes]
    flat = {kind for kinds_ in kinds for kind in (kinds_ if isinstance(kinds_, list) else [kinds_])}
    base = flat - {"null"}
    if len(base) != 1 or None in base:
        raise Apart(shapes)
    (kind,) = base
    shape: Shape = {"type": [kind, "null"] if "null" in flat else kind}
    if all(other.get("description") == first.get("description") for other in shapes):
        shape.update({"description": first["description"]} if "description" in first else {})
    extra = set().union(*shapes) - {"type", "description", "examples", *LOWER, *UPPER, "items"}
    for key in sorted(extra):
        values = [other.get(key) for other in shapes]
        if any(value != values[0] for value in values):
            raise Apart(shapes)
        shape[key] = values[0]
    for bound in LOWER:
        if all(bound in other for other in shapes):
            shape[bound] = min(other[bound] for other in shapes)
    for bound in UPPER:
        if all(bound in other for other in shapes):
            shape[bound] = max(other[bound] for other in shapes)
    if kind == "array":
        shape["items"] = widened([other["items"] for other in shapes])
    if "examples" in first:
        shape["examples"] = first["examples"]
    return shape


LOWER = ("minimum", "minItems")
UPPER = ("maximum", "maxItems")
