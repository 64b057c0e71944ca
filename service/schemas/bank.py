"""Bank's shapes: its state, a seat's view, moves and events (the Bank wire contract).

Every answer shape here is open to more fields (the server may add some); a move is read
whole by the game, which names what is wrong with it."""

from typing import Any

from marshmallow import INCLUDE, Schema, fields, validate

from engine.bank.rules import MAX_TARGET_SCORE
from service.schemas.common import (
    CardField,
    EventSchema,
    GameSchemas,
    cards,
    event_type,
    resolved_rules,
)

SUITS = ["C", "D", "H", "S"]
FINISHES = ["plain", "king", "trump_king", "run", "quad", "four_kings"]
MOVE_TYPES = ["lay", "quad", "run", "draw", "pass"]


class Open(Schema):
    """An answer shape: the fields listed are there; the server may add more."""

    class Meta:
        unknown = INCLUDE


def seat(**kwargs: Any) -> fields.Integer:
    return fields.Integer(required=True, validate=validate.Range(min=0, max=3), **kwargs)


def maybe_seat(**kwargs: Any) -> fields.Integer:
    return fields.Integer(
        required=True, allow_none=True, validate=validate.Range(min=0, max=3), **kwargs
    )


def per_seat(field: fields.Field, description: str = "") -> fields.List:
    return fields.List(
        field,
        required=True,
        metadata={"description": " ".join(["one entry per seat", description])},
    )


def finish(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.OneOf(FINISHES), **kwargs)


def choice(*values: object) -> dict[str, object]:
    return {"type": "integer" if isinstance(values[0], int) else "string", "enum": list(values)}


OPTIONS = {
    "target_score": {"type": "integer", "minimum": 1, "maximum": MAX_TARGET_SCORE},
    "dealer_rule": choice("loser", "finisher", "starter", "max_points", "min_points"),
    "trump_mode": choice("per_player", "none", "single", "double", "senior_junior"),
    "after_seven": choice("skip", "draw_then_play", "skip_and_draw", "none"),
    "after_capture": choice("virtual_target", "free_lead", "turn_up"),
    "hand_penalty": {"type": "boolean"},
    "penalty_mode": choice("hand_points", "fixed", "per_card"),
    "fixed_penalty": choice(15, 23, 31, 40, 48, 56),
    "per_card_penalty": choice(3, 6),
}

BankResolvedRulesSchema = resolved_rules("Bank", ["classic"], OPTIONS)


class BankClassesSchema(Open):
    """Each suit's class for everybody: 0 plain, 1 trump (junior), 2 senior trump."""

    C = fields.Integer(required=True, validate=validate.Range(min=0, max=2))
    D = fields.Integer(required=True, validate=validate.Range(min=0, max=2))
    H = fields.Integer(required=True, validate=validate.Range(min=0, max=2))
    S = fields.Integer(required=True, validate=validate.Range(min=0, max=2))


class BankTrumpsSchema(Open):
    common = fields.Nested(BankClassesSchema, required=True)
    personal = fields.List(
        fields.String(allow_none=True, validate=validate.OneOf(SUITS)),
        required=True,
        metadata={"description": "per seat, its own trump suit under per_player, else null"},
    )


class BankCardSchema(Open):
    """A card of the bank and the seat that laid it (null for a pack card)."""

    card = CardField(required=True)
    by = maybe_seat()


class BankTargetSchema(Open):
    """The card to answer; virtual (by null) after a capture."""

    card = CardField(required=True)
    by = maybe_seat()
    virtual = fields.Boolean(required=True)


class BankOutSchema(Open):
    seat = seat()
    place = fields.Integer(required=True, validate=validate.Range(min=1, max=3))
    finish = finish(required=True)
    bonus = fields.Integer(required=True)


class BankTiebreakSchema(Open):
    eligible = fields.List(fields.Integer(), required=True, metadata={"description": "ascending"})
    extra_deals = fields.Integer(required=True, validate=validate.Range(min=0, max=5))


class BankPublicSchema(Open):
    """What everybody may see of a Bank game."""

    game = fields.String(required=True, validate=validate.Equal("bank"))
    rules = fields.Nested(BankResolvedRulesSchema, required=True)
    seats = fields.Integer(required=True, validate=validate.Range(min=2, max=4))
    dealer = seat()
    trumps = fields.Nested(BankTrumpsSchema, required=True)
    bank = fields.List(
        fields.Nested(BankCardSchema), required=True, metadata={"description": "bottom to top"}
    )
    target = fields.Nested(
        BankTargetSchema,
        required=True,
        allow_none=True,
        metadata={"description": "the card to answer; null: a free lead"},
    )
    turn = maybe_seat(metadata={"description": "null once the match is over"})
    drawn = fields.Boolean(
        required=True, metadata={"description": "the seat to move has drawn this obligation"}
    )
    out = fields.List(
        fields.Nested(BankOutSchema), required=True, metadata={"description": "in finishing order"}
    )
    captured = per_seat(cards())
    idle = fields.Integer(required=True, validate=validate.Range(min=0))
    starter = seat()
    scores = per_seat(fields.Integer())
    deal = fields.Integer(required=True, validate=validate.Range(min=1, max=200))
    status = fields.String(required=True, validate=validate.OneOf(["playing", "match_over"]))
    winner = maybe_seat(metadata={"description": "the single winner; null while playing or shared"})
    winners = fields.List(fields.Integer(), required=True, metadata={"description": "ascending"})
    tiebreak = fields.Nested(BankTiebreakSchema, required=True, allow_none=True)


class BankStateSchema(BankPublicSchema):
    """A whole Bank game. Post it back as the server wrote it; the server checks that it is
    self-consistent (each of the 36 cards exactly once, trumps as the rules say, the target
    on the bank's top card...) and answers 422 naming the field when it is not."""

    class Meta:
        unknown = INCLUDE
        description = (
            "A whole Bank game. Post it back as the server wrote it; the server checks that "
            "it is self-consistent and answers 422 naming the field when it is not. Cards: "
            "rank then suit from the 36-card pack (6 to A), e.g. 6S, TD."
        )

    hands = per_seat(cards())
    stock = cards(required=True, metadata={"description": "stock[0] is drawn next"})
    seed = fields.String(metadata={"description": "what later deals derive from"})


class BankViewSchema(BankPublicSchema):
    """What one seat may see: no other hand, no stock, no seed. A spectator (seat null)
    sees no hand at all."""

    seat = fields.Integer(required=True, allow_none=True)
    hand = cards(metadata={"description": "the seat's own cards (a seat's view only)"})
    hand_sizes = per_seat(fields.Integer())
    stock_size = fields.Integer(required=True)


class BankMoveSchema(Open):
    """A move to play: lay a card, lay a quad or a run (in laying order), draw or pass. A
    move as legal-moves wrote it is accepted back as it is."""

    type = fields.String(required=True, validate=validate.OneOf(MOVE_TYPES))
    card = CardField(metadata={"description": "lay: the card"})
    cards = cards(metadata={"description": "quad or run: the four cards in laying order"})


class BankLegalMoveSchema(BankMoveSchema):
    """A legal move: a quad once per choice of top card, a run once from each end."""


class BankSideScoreSchema(Open):
    captured_points = fields.Integer(required=True)
    finish = finish(required=True, allow_none=True)
    place = fields.Integer(required=True, allow_none=True)
    bonus = fields.Integer(required=True)
    penalty = fields.Integer(required=True)
    total = fields.Integer(required=True)


class BankLayEventSchema(EventSchema):
    type = event_type("lay")
    seat = seat()
    card = CardField(required=True)


class BankQuadEventSchema(EventSchema):
    type = event_type("quad")
    seat = seat()
    cards = cards(required=True, metadata={"description": "in laying order"})


class BankRunEventSchema(EventSchema):
    type = event_type("run")
    seat = seat()
    cards = cards(required=True, metadata={"description": "in laying order"})


class BankDrawEventSchema(EventSchema):
    """A seat drew the stock's top card; null to every other seat."""

    type = event_type("draw")
    seat = seat()
    card = CardField(required=True, allow_none=True)
    forced = fields.Boolean(required=True, metadata={"description": "a seven's draw"})


class BankPassEventSchema(EventSchema):
    type = event_type("pass")
    seat = seat()


class BankCaptureEventSchema(EventSchema):
    type = event_type("capture")
    seat = seat(metadata={"description": "the taker"})
    cards = cards(required=True, metadata={"description": "the bank, bottom to top"})
    points = fields.Integer(required=True)
    why = fields.String(
        required=True, validate=validate.OneOf(["pass", "trump_king", "four_kings"])
    )


class BankTurnUpEventSchema(EventSchema):
    type = event_type("turn_up")
    card = CardField(required=True, metadata={"description": "the new pack card"})


class BankSkipEventSchema(EventSchema):
    type = event_type("skip")
    seat = seat(metadata={"description": "the seat that misses its turn"})


class BankOutEventSchema(EventSchema):
    type = event_type("out")
    seat = seat()
    place = fields.Integer(required=True)
    finish = finish(required=True)
    bonus = fields.Integer(required=True)


class BankDealEndEventSchema(EventSchema):
    type = event_type("deal_end")
    deal = fields.Integer(required=True)
    ending = fields.String(required=True, validate=validate.OneOf(["E1", "E2"]))
    loser = maybe_seat()
    penalty = fields.Integer(required=True)
    sides = per_seat(fields.Nested(BankSideScoreSchema))
    scores = per_seat(fields.Integer(), "(after banking)")
    discarded = cards(required=True, metadata={"description": "the bank, bottom to top"})


class BankMatchEndEventSchema(EventSchema):
    type = event_type("match_end")
    winner = maybe_seat()
    winners = fields.List(fields.Integer(), required=True)
    scores = fields.List(fields.Integer(), required=True)


class BankDealEventSchema(EventSchema):
    """The next deal, dealt in the same call."""

    type = event_type("deal")
    deal = fields.Integer(required=True)
    dealer = seat()
    starter = seat()
    card = CardField(required=True, metadata={"description": "the pack card"})


SCHEMAS = GameSchemas(
    state=BankStateSchema,
    view=BankViewSchema,
    move=BankMoveSchema,
    legal_move=BankLegalMoveSchema,
    side_score=BankSideScoreSchema,
    options=OPTIONS,
    events=(
        BankLayEventSchema,
        BankQuadEventSchema,
        BankRunEventSchema,
        BankDrawEventSchema,
        BankPassEventSchema,
        BankCaptureEventSchema,
        BankTurnUpEventSchema,
        BankSkipEventSchema,
        BankOutEventSchema,
        BankDealEndEventSchema,
        BankMatchEndEventSchema,
        BankDealEventSchema,
    ),
)
