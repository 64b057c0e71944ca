"""Basra's shapes (contract: "Basra state", "Moves", the stateless endpoints)."""

from marshmallow import INCLUDE, Schema, fields, validate

from service.schemas.common import CardField, EventSchema, GameSchemas, cards, event_type


class BasraResolvedRulesSchema(Schema):
    """The resolved rules a state carries: the preset and every option."""

    class Meta:
        unknown = INCLUDE

    preset = fields.String(required=True)


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

    game = fields.String(required=True)
    rules = fields.Dict(required=True)
    seat = fields.Integer(required=True, allow_none=True)
    hand = cards(metadata={"description": "the seat's own cards (a seat's view only)"})
    hand_sizes = fields.List(fields.Integer(), required=True)
    stock_size = fields.Integer(required=True)
    table = cards(required=True)
    captured = fields.List(cards(), required=True)
    scores = fields.List(fields.Integer(), required=True)
    turn = fields.Integer(required=True, allow_none=True)
    status = fields.String(required=True)


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
    events=(
        BasraMoveEventSchema,
        BasraCaptureEventSchema,
        BasraBasraEventSchema,
        BasraDealEventSchema,
        BasraRoundEndEventSchema,
        BasraMatchEndEventSchema,
    ),
)
