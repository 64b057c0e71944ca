"""What every game's schema module builds on: card fields, the set of schemas a game
offers the service, and open object schemas for a game that has no module of its own."""

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate

from engine.cards import CardError, parse_card

CARD_PATTERN = "^(?:[A2-9TJQKatjqk]|10)[CDHScdhs]$"


class CardField(fields.String):
    """A card: `7D`, `TD`; on input also `10d`, `7d`. Loads to the canonical form."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {"pattern": CARD_PATTERN, "examples": ["7D", "TD"], **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        try:
            return parse_card(value)
        except CardError as error:
            raise ValidationError(str(error)) from error


def cards(**kwargs: Any) -> fields.List:
    """A list of cards."""
    return fields.List(CardField(), **kwargs)


class EventSchema(Schema):
    """One type of event. Open to more fields: a hosted session adds its `version`."""

    class Meta:
        unknown = INCLUDE


def event_type(name: str) -> fields.String:
    """The `type` of one kind of event: exactly `name`."""
    return fields.String(required=True, validate=validate.Equal(name))


@dataclass(frozen=True, slots=True)
class GameSchemas:
    """The shapes of one game: its state, what a seat sees of it, a move as sent, a move as
    listed, one side's score, and one schema per event type. The envelopes (requests and
    answers) are built around these; their components are named after the game."""

    state: type[Schema]
    view: type[Schema]
    move: type[Schema]
    legal_move: type[Schema]
    side_score: type[Schema]
    events: Sequence[type[Schema]]
    # Each rule option's JSON schema (type, enum, bounds): the rules a request may send and
    # the resolved rules a state echoes are documented from it; the game checks the values.
    options: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def resolved_rules(title: str, options: Mapping[str, dict[str, Any]]) -> type[Schema]:
    """The rules a state or a view echoes: the preset and every option, resolved."""
    documented = {
        name: fields.Raw(required=True, metadata=shape) for name, shape in options.items()
    }
    return type(
        f"{title}ResolvedRulesSchema",
        (Schema,),
        {
            "Meta": type("Meta", (), {"description": "The preset and every option resolved."}),
            "preset": fields.String(required=True),
            **documented,
        },
    )


def tag_of(schema: type[Schema], name: str) -> str:
    """The one value the field `name` of `schema` may hold (its validate.Equal)."""
    for validator in schema._declared_fields[name].validators:
        if isinstance(validator, validate.Equal):
            return validator.comparable
    raise ValueError(f"{schema.__name__}.{name} has no single value")


class OpenObject(Schema):
    """Any JSON object: what the service knows of a game that has no schema module."""

    class Meta:
        unknown = INCLUDE


def open_schemas(title: str) -> GameSchemas:
    """Open object schemas, one class per role so that each is its own component."""

    def open_object(role: str, **extra: Any) -> type[Schema]:
        return type(f"{title}{role}Schema", (OpenObject,), extra)

    event = type(f"{title}EventSchema", (EventSchema,), {"type": fields.String(required=True)})
    return GameSchemas(
        state=open_object("State"),
        view=open_object("View"),
        move=open_object("Move"),
        legal_move=open_object("LegalMove"),
        side_score=open_object("SideScore"),
        events=(event,),
    )


def title_of(game: str) -> str:
    """The prefix of a game's component names: `basra` -> `Basra`."""
    return "".join(part.capitalize() for part in game.replace("-", "_").split("_"))


@cache
def game_schemas(game: str) -> GameSchemas:
    """The schemas of `game`: its module `service/schemas/<game>.py` (which defines
    `SCHEMAS`), or open object schemas when it has none."""
    module = f"{__package__}.{game}"
    if game.isidentifier() and importlib.util.find_spec(module):
        found = getattr(importlib.import_module(module), "SCHEMAS", None)
        if isinstance(found, GameSchemas):
            return found
    return open_schemas(title_of(game))
