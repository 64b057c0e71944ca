"""marshmallow schemas: the one source of the request and response shapes.

Requests are loaded with marshmallow up to the envelope; a `state` stays a raw object that
the game's own reader checks in depth (precise and several times faster than marshmallow
on a full state). Responses are documented here and written by the game's writer.
"""

import json
from typing import Any

import apispec
import yaml
from marshmallow import INCLUDE, Schema, ValidationError, fields, validate, validates_schema

from engine.bots import LEVELS
from engine.cards import CardError, parse_card
from engine.game import games
from service.errors import ProblemSchema

CARD_PATTERN = "^(?:[A2-9TJQKatjqk]|10)[CDHScdhs]$"
STATE_REF = {"$ref": "#/components/schemas/BasraState"}
VIEW_REF = {"$ref": "#/components/schemas/BasraView"}


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
    return fields.List(CardField(), **kwargs)


class StateField(fields.Raw):
    """A game state as a raw JSON object: marshmallow checks only that it is an object;
    the game's reader checks the rest and names the bad field."""

    def __init__(self, **kwargs: Any) -> None:
        metadata = {
            "type": "object",
            "allOf": [dict(STATE_REF)],
            "description": "a whole game state, as the server wrote it",
            **kwargs.pop("metadata", {}),
        }
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict:
        if not isinstance(value, dict):
            raise ValidationError("must be an object (a game state)")
        return value


def option_defaults() -> str:
    options = games()["basra"].catalogue()["options"]
    return ", ".join(f"{name} (default {json.dumps(value)})" for name, value in options.items())


class RulesSchema(Schema):
    """`{"preset": name, <option>: value, ...}`; the game checks every option."""

    class Meta:
        unknown = INCLUDE
        description = (
            "A preset and any rule options that override it; GET /v1/games lists them all. "
            f"Options: {option_defaults()}. A state echoes every resolved option."
        )

    preset = fields.String(
        metadata={"description": "a preset name (see GET /v1/games)", "examples": ["levantine"]}
    )


class MoveSchema(Schema):
    """A move to play; a move as legal-moves wrote it is accepted back as it is."""

    card = CardField(required=True, metadata={"description": "a card from the mover's hand"})
    capture = cards(
        metadata={
            "description": "the table cards taken ([] to lay the card on the table); may be "
            "omitted when the card has exactly one legal outcome"
        }
    )
    basra = fields.Boolean(metadata={"description": "ignored: the server works it out"})
    basra_points = fields.Integer(metadata={"description": "ignored"})
    points = fields.Integer(metadata={"description": "ignored"})


class BasraSchema(Schema):
    card = CardField(required=True)
    points = fields.Integer(required=True)


class BasraStateSchema(Schema):
    """The Basra state (contract: "Basra state"); documentation, and the deep marshmallow
    check that bench/http.py measures against the game's own reader."""

    class Meta:
        description = (
            "A whole Basra game. Post it back as the server wrote it; the server checks that "
            "it is self-consistent (every card exactly once, hand sizes, turn...) and answers "
            "422 naming the field when it is not. Cards: rank then suit, e.g. 7D, TD."
        )

    game = fields.String(required=True, validate=validate.Equal("basra"))
    rules = fields.Nested(RulesSchema, required=True)
    seats = fields.Integer(required=True, metadata={"description": "2, or 4 where allowed"})
    dealer = fields.Integer(required=True)
    turn = fields.Integer(required=True, allow_none=True)
    hands = fields.List(cards(), required=True, metadata={"description": "one per seat"})
    table = cards(required=True, metadata={"description": "in the order they arrived"})
    stock = cards(required=True, metadata={"description": "the next to be dealt first"})
    captured = fields.List(cards(), required=True, metadata={"description": "one per side"})
    basras = fields.List(fields.List(fields.Nested(BasraSchema)), required=True)
    last_capturer = fields.Integer(required=True, allow_none=True)
    scores = fields.List(fields.Integer(), required=True)
    carry = fields.Integer(required=True)
    round = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["playing", "match_over"]))
    winner = fields.Integer(required=True, allow_none=True)
    seed = fields.String(metadata={"description": "what later deals derive from"})


class BasraViewSchema(Schema):
    """What one seat may see: no other hand, no stock, no seed."""

    class Meta:
        unknown = INCLUDE

    game = fields.String(required=True)
    rules = fields.Dict(required=True)
    seat = fields.Integer(required=True)
    hand = cards(required=True)
    hand_sizes = fields.List(fields.Integer(), required=True)
    stock_size = fields.Integer(required=True)
    table = cards(required=True)
    captured = fields.List(cards(), required=True)
    scores = fields.List(fields.Integer(), required=True)
    turn = fields.Integer(required=True, allow_none=True)
    status = fields.String(required=True)


class NewGameRequest(Schema):
    rules = fields.Nested(RulesSchema, metadata={"description": 'default {"preset": "levantine"}'})
    seed = fields.String(
        metadata={
            "description": "any string; same seed and rules give the same game. "
            "Drawn at random when omitted."
        }
    )
    seats = fields.Integer(strict=True, metadata={"description": "2 (default) or 4"})


class StateRequest(Schema):
    state = StateField(required=True)


class ApplyRequest(StateRequest):
    move = fields.Nested(MoveSchema, required=True)


class ViewRequest(StateRequest):
    seat = fields.Integer(required=True, strict=True, validate=validate.Range(min=0))


class StateResponse(Schema):
    state = StateField(required=True)


class LegalMoveSchema(Schema):
    card = CardField(required=True)
    capture = cards(required=True, metadata={"description": "in canonical order"})
    basra = fields.Boolean(required=True)
    basra_points = fields.Integer(required=True)
    points = fields.Integer(required=True, metadata={"description": "what the move earns at once"})


class LegalMovesResponse(Schema):
    moves = fields.List(fields.Nested(LegalMoveSchema), required=True)


class EventSchema(Schema):
    class Meta:
        unknown = INCLUDE

    type = fields.String(
        required=True,
        validate=validate.OneOf(["move", "capture", "basra", "deal", "round_end", "match_end"]),
    )


class ApplyResponse(StateResponse):
    events = fields.List(
        fields.Dict(metadata={"allOf": [{"$ref": "#/components/schemas/Event"}]}), required=True
    )


class SideScoreSchema(Schema):
    cards = fields.Integer(required=True)
    majority = fields.Integer(required=True)
    jacks = fields.Integer(required=True)
    aces = fields.Integer(required=True)
    two_clubs = fields.Integer(required=True)
    ten_diamonds = fields.Integer(required=True)
    basras = fields.Integer(required=True)
    total = fields.Integer(required=True)


class ScoreResponse(Schema):
    sides = fields.List(fields.Nested(SideScoreSchema), required=True)


class ViewResponse(Schema):
    view = fields.Dict(required=True, metadata={"allOf": [dict(VIEW_REF)]})


class GameCatalogueSchema(Schema):
    name = fields.String(required=True)
    seats = fields.List(fields.Integer(), required=True)
    default_preset = fields.String(required=True)
    presets = fields.Dict(
        keys=fields.String(), values=fields.Dict(), required=True,
        metadata={"description": "each preset with every option resolved"},
    )  # fmt: skip
    options = fields.Dict(
        required=True, metadata={"description": "every rule option with its default"}
    )


class CatalogueResponse(Schema):
    games = fields.List(fields.Nested(GameCatalogueSchema), required=True)


class HintRequest(StateRequest):
    level = fields.String(
        load_default="expert",
        validate=validate.OneOf(LEVELS),
        metadata={"description": "which computer player advises (default expert)"},
    )
    seed = fields.String(
        metadata={"description": "the bot's randomness; the same state, level and seed give the "
                  "same hint. Drawn at random when omitted."}
    )  # fmt: skip


class HintAlternativeSchema(Schema):
    move = fields.Nested(LegalMoveSchema, required=True)
    value = fields.Float(
        required=True,
        metadata={
            "description": "the bot's estimate for the mover: expert the mean round point "
            "difference of its playouts, greedy the immediate points, random the chance"
        },
    )


class HintResponse(Schema):
    move = fields.Nested(LegalMoveSchema, required=True, metadata={"description": "the advice"})
    alternatives = fields.List(
        fields.Nested(HintAlternativeSchema),
        required=True,
        metadata={"description": "every legal move the bot weighed, in legal-moves order"},
    )
    level = fields.String(required=True)


class SessionSeatRequest(Schema):
    type = fields.String(required=True, validate=validate.OneOf(["human", "bot"]))
    level = fields.String(
        validate=validate.OneOf(LEVELS),
        metadata={"description": "bot seats only: how strongly the bot plays"},
    )

    @validates_schema
    def bots_have_a_level(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("type") == "bot" and "level" not in data:
            raise ValidationError(f"a bot seat needs a level, one of {list(LEVELS)}", "level")
        if data.get("type") == "human" and "level" in data:
            raise ValidationError("only a bot seat has a level", "level")


class CreateSessionRequest(Schema):
    game = fields.String(load_default="basra", validate=validate.OneOf(list(games())))
    rules = fields.Nested(RulesSchema, metadata={"description": 'default {"preset": "levantine"}'})
    seats = fields.List(
        fields.Nested(SessionSeatRequest),
        required=True,
        metadata={"description": "one entry per seat (2, or 4 where the rules allow it)"},
    )
    seed = fields.String(
        metadata={"description": "what the deals derive from; drawn at random when omitted"}
    )

    @validates_schema
    def someone_is_human(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "seats" in data and not any(seat["type"] == "human" for seat in data["seats"]):
            raise ValidationError("at least one seat must be human", "seats")


class SessionSeatSchema(Schema):
    seat = fields.Integer(required=True)
    type = fields.String(required=True, metadata={"description": "'human' or 'bot'"})
    token = fields.String(
        metadata={"description": "human seats only: the seat's secret bearer token"}
    )
    level = fields.String(metadata={"description": "bot seats only"})


class CreateSessionResponse(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(
        required=True, metadata={"description": "above 0 when bots moved first"}
    )
    seats = fields.List(fields.Nested(SessionSeatSchema), required=True)


class SessionEventSchema(EventSchema):
    version = fields.Integer(required=True, metadata={"description": "the move's version"})


def session_events() -> fields.List:
    return fields.List(
        fields.Dict(metadata={"allOf": [{"$ref": "#/components/schemas/SessionEvent"}]}),
        required=True,
    )


class SessionResponse(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    view = fields.Dict(required=True, metadata={"allOf": [dict(VIEW_REF)]})
    moves = fields.List(
        fields.Nested(LegalMoveSchema),
        required=True,
        metadata={"description": "the seat's legal moves when it is its turn, else []"},
    )


class SessionMoveRequest(Schema):
    move = fields.Nested(MoveSchema, required=True)
    version = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=0),
        metadata={"description": "the session's current version (else 409)"},
    )


class SessionMoveResponse(Schema):
    version = fields.Integer(required=True)
    view = fields.Dict(required=True, metadata={"allOf": [dict(VIEW_REF)]})
    moves = fields.List(fields.Nested(LegalMoveSchema), required=True)
    events = session_events()


class StaleVersionProblem(ProblemSchema):
    """The 409 of a move on a version that is not the current one."""

    version = fields.Integer(
        required=True, metadata={"description": "the session's current version"}
    )


class SessionEventsQuery(Schema):
    after = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=2**53 - 1),
        metadata={"description": "a version: the events of the moves after it"},
    )


def document(spec: Any) -> None:
    """Components the fields refer to by $ref."""
    spec.components.schema("BasraState", schema=BasraStateSchema)
    spec.components.schema("BasraView", schema=BasraViewSchema)
    spec.components.schema("Event", schema=EventSchema)
    spec.components.schema("SessionEvent", schema=SessionEventSchema)


class PlainDumper(yaml.SafeDumper):
    """No YAML anchors: a schema reused by several fields is written out each time."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def spec_yaml(spec: apispec.APISpec) -> str:
    return spec.to_yaml({"Dumper": PlainDumper})
