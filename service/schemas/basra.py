"""Basra's shapes (contract: "Basra state", "Moves", the stateless endpoints)."""

from marshmallow import INCLUDE, Schema, fields, validate

from engine.basra.rules import MAX_TARGET_SCORE
from service.schemas.common import (
    CardField,
    EventSchema,
    GameSchemas,
    cards,
    event_type,
    resolved_rules,
)

SEAT_COUNTS = [2, 4]
STATUSES = ["playing", "match_over"]


def choice(*values: object) -> dict[str, object]:
    kind = "boolean" if isinstance(values[0], bool) else (
        "integer" if isinstance(values[0], int) else "string")  # fmt: skip
    return {"type": kind, "enum": list(values)}


def at_least(minimum: int) -> dict[str, object]:
    return {"type": "integer", "minimum": minimum}


BOOLEAN = {"type": "boolean"}
OPTIONS = {
    "seats_allowed": {
        "type": "array", "items": choice(*SEAT_COUNTS), "minItems": 1,
        "description": "the seat counts these rules can be played with",
    },
    "hand_size": choice(4, 6),
    "initial_table_redeal": BOOLEAN,
    "forced_capture": BOOLEAN,
    "capture_policy": choice("max_cards", "any_family"),
    "seven_diamonds_mode": choice("sweep", "wild", "plain"),
    "seven_diamonds_basra_max_sum": at_least(1),
    "table_seven_diamonds": choice("plain", "lone_wild"),
    "basra_points": at_least(0),
    "jack_basra_points": at_least(0),
    "last_card_basra_counts": BOOLEAN,
    "majority_points": at_least(0),
    "card_points": BOOLEAN,
    "tie_policy": choice("void_round_carry", "carry", "none"),
    "target_score": {**at_least(1), "maximum": MAX_TARGET_SCORE},
}  # fmt: skip

BasraResolvedRulesSchema = resolved_rules("Basra", ["egyptian", "levantine"], OPTIONS)


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
    rules = fields.Nested(BasraResolvedRulesSchema, required=True)
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
    """What one seat may see: no other hand, no stock, no seed. A spectator (seat null)
    sees no hand at all."""

    class Meta:
        unknown = INCLUDE

    game = fields.String(required=True, validate=validate.Equal("basra"))
    rules = fields.Nested(BasraResolvedRulesSchema, required=True)
    seats = fields.Integer(required=True, validate=validate.OneOf(SEAT_COUNTS))
    dealer = fields.Integer(required=True, validate=validate.Range(min=0, max=3))
    turn = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null once the match is over"}
    )
    table = cards(required=True, metadata={"description": "in the order they arrived"})
    captured = fields.List(cards(), required=True, metadata={"description": "one per side"})
    basras = fields.List(
        fields.List(fields.Nested(BasraSchema)),
        required=True,
        metadata={"description": "one per side: the basras it made"},
    )
    last_capturer = fields.Integer(
        required=True, allow_none=True, metadata={"description": "the seat that captured last"}
    )
    scores = fields.List(
        fields.Integer(), required=True, metadata={"description": "one per side, banked"}
    )
    carry = fields.Integer(
        required=True, metadata={"description": "points carried over from a tied round"}
    )
    round = fields.Integer(required=True, validate=validate.Range(min=1))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    winner = fields.Integer(
        required=True, allow_none=True, metadata={"description": "the winning side, once over"}
    )
    seat = fields.Integer(required=True, allow_none=True)
    hand = cards(metadata={"description": "the seat's own cards (a seat's view only)"})
    hand_sizes = fields.List(fields.Integer(), required=True, metadata={"description": "per seat"})
    stock_size = fields.Integer(required=True)


class BasraMoveSchema(Schema):
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


class BasraLegalMoveSchema(Schema):
    card = CardField(required=True)
    capture = cards(required=True, metadata={"description": "in canonical order"})
    basra = fields.Boolean(required=True)
    basra_points = fields.Integer(required=True)
    points = fields.Integer(required=True, metadata={"description": "what the move earns at once"})


class BasraSideScoreSchema(Schema):
    cards = fields.Integer(required=True)
    majority = fields.Integer(required=True)
    jacks = fields.Integer(required=True)
    aces = fields.Integer(required=True)
    two_clubs = fields.Integer(required=True)
    ten_diamonds = fields.Integer(required=True)
    basras = fields.Integer(required=True)
    total = fields.Integer(required=True)


class BasraMoveEventSchema(EventSchema):
    """A seat played a card; `capture` is [] when it was laid on the table."""

    type = event_type("move")
    seat = fields.Integer(required=True)
    card = CardField(required=True)
    capture = cards(required=True)


class BasraCaptureEventSchema(EventSchema):
    """The cards a capture took, the played card included."""

    type = event_type("capture")
    seat = fields.Integer(required=True)
    side = fields.Integer(required=True)
    cards = cards(required=True)


class BasraBasraEventSchema(EventSchema):
    """The capture was a basra."""

    type = event_type("basra")
    seat = fields.Integer(required=True)
    side = fields.Integer(required=True)
    card = CardField(required=True)
    points = fields.Integer(required=True)


class BasraDealEventSchema(EventSchema):
    """Fresh hands were dealt (sizes only); a new round also shows its table."""

    type = event_type("deal")
    round = fields.Integer(required=True)
    dealer = fields.Integer(required=True)
    hand_size = fields.Integer(required=True)
    stock = fields.Integer(required=True, metadata={"description": "cards left in the stock"})
    table = cards(metadata={"description": "a new round only: the table it starts with"})


class BasraSweepSchema(Schema):
    seat = fields.Integer(required=True)
    side = fields.Integer(required=True)
    cards = cards(required=True)


class BasraRoundEndEventSchema(EventSchema):
    """The round's breakdown, banked into `scores`."""

    type = event_type("round_end")
    round = fields.Integer(required=True)
    sweep = fields.Nested(BasraSweepSchema, required=True)
    sides = fields.List(fields.Nested(BasraSideScoreSchema), required=True)
    scores = fields.List(fields.Integer(), required=True)
    carry = fields.Integer(required=True)


class BasraMatchEndEventSchema(EventSchema):
    type = event_type("match_end")
    winner = fields.Integer(required=True)
    scores = fields.List(fields.Integer(), required=True)


SCHEMAS = GameSchemas(
    state=BasraStateSchema,
    view=BasraViewSchema,
    move=BasraMoveSchema,
    legal_move=BasraLegalMoveSchema,
    side_score=BasraSideScoreSchema,
    options=OPTIONS,
    events=(
        BasraMoveEventSchema,
        BasraCaptureEventSchema,
        BasraBasraEventSchema,
        BasraDealEventSchema,
        BasraRoundEndEventSchema,
        BasraMatchEndEventSchema,
    ),
)
