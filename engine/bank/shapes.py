"""Bank's shapes, declared once (engine/shapes.py): its state, a seat's view, a move as
sent and as listed, one seat's score and its events. The service derives openapi.yaml and
its request checks from them; the rule options are declared in engine/bank/rules.py."""

from engine.bank.moves import TYPES
from engine.bank.rules import OPTIONS, SEAT_COUNTS
from engine.bank.state import BONUS, EXTRA_DEALS, MATCH_OVER, MAX_DEALS, PLAYING
from engine.cards import SUITS
from engine.shapes import (
    GameShapes,
    array,
    boolean,
    card,
    cards,
    choice,
    const,
    integer,
    nullable,
    obj,
    ref,
    seed,
)

MAX_SEAT = max(SEAT_COUNTS) - 1
FINISHES = tuple(BONUS)


def seat(description: str = "") -> dict:
    return integer(0, MAX_SEAT, description)


def seats_ascending(description: str = "ascending") -> dict:
    return array(seat(), description, maxItems=max(SEAT_COUNTS))


def per_seat(shape: dict, description: str = "one entry per seat") -> dict:
    return array(shape, description, minItems=min(SEAT_COUNTS), maxItems=max(SEAT_COUNTS))


PUBLIC = {
    "game": const("bank"),
    "rules": ref("ResolvedRules"),
    "seats": choice(*SEAT_COUNTS),
    "dealer": seat(),
    "trumps": ref("Trumps"),
    "bank": array(ref("Card"), "bottom to top", maxItems=36),
    "target": nullable(ref("Target", "the card to answer; null: a free lead")),
    "turn": nullable(seat("null once the match is over")),
    "drawn": boolean("the seat to move has drawn this obligation"),
    "out": array(ref("Out"), "in finishing order", maxItems=MAX_SEAT),
    "captured": per_seat(cards()),
    "idle": integer(0),
    "starter": seat(),
    "scores": per_seat(integer()),
    "deal": integer(1, MAX_DEALS),
    "status": choice(PLAYING, MATCH_OVER),
    "winner": nullable(seat("the single winner; null while playing or shared")),
    "winners": seats_ascending(),
    "tiebreak": nullable(ref("Tiebreak")),
}
STATE = obj(
    {
        **PUBLIC,
        "hands": per_seat(cards()),
        "stock": cards("stock[0] is drawn next"),
        "seed": seed("what later deals derive from"),
    },
    optional=("seed",),
    description="A whole Bank game. Post it back as the server wrote it; the server checks "
    "that it is self-consistent and answers 422 naming the field when it is not. Cards: rank "
    "then suit from the 36-card pack (6 to A), e.g. 6S, TD.",
)
VIEW = obj(
    {
        **PUBLIC,
        "seat": nullable(seat("the seat this view is for; null for a spectator")),
        "hand": cards("the seat's own cards (a seat's view only)"),
        "hand_sizes": per_seat(integer(0)),
        "stock_size": integer(0),
    },
    optional=("hand",),
    description="What one seat may see: no other hand, no stock, no seed. A spectator (seat "
    "null) sees no hand at all.",
)
MOVE = obj(
    {
        "type": choice(*TYPES),
        "card": card("lay: the card"),
        # No minItems: OpenAPI Generator's java clients write a list left unset as [], on
        # every move; the quad or run that lists other than four cards is a 422 all the same.
        "cards": cards(
            "quad or run: the four cards in laying order; ignored by the other moves ([] "
            "included)",
            maxItems=4,
        ),
    },
    optional=("card", "cards"),
    description="A move to play: lay a card, lay a quad or a run (in laying order), draw or "
    "pass. A move as legal-moves wrote it is accepted back as it is.",
)
LEGAL_MOVE = obj(
    {
        "type": choice(*TYPES),
        "card": card("lay: the card"),
        "cards": cards("quad or run: the four cards in laying order", minItems=4, maxItems=4),
    },
    optional=("card", "cards"),
    description="A legal move: a quad once per choice of top card, a run once from each end.",
)
SIDE_SCORE = obj(
    {
        "captured_points": integer(0),
        "finish": nullable(choice(*FINISHES)),
        "place": nullable(integer(1, MAX_SEAT)),
        "bonus": integer(0),
        "penalty": integer(0),
        "total": integer(),
    }
)


def event(kind: str, description: str = "", optional: tuple[str, ...] = (), **fields: dict) -> dict:
    return obj({"type": const(kind), **fields}, optional, description)


EVENTS = (
    event("lay", seat=seat(), card=card()),
    event("quad", seat=seat(), cards=cards("in laying order")),
    event("run", seat=seat(), cards=cards("in laying order")),
    event(
        "draw",
        "A seat drew the stock's top card; null to every other seat.",
        seat=seat(),
        card=nullable(card()),
        forced=boolean("a seven's draw"),
    ),
    event("pass", seat=seat()),
    event(
        "capture",
        seat=seat("the taker"),
        cards=cards("the bank, bottom to top"),
        points=integer(0),
        why=choice("pass", "trump_king", "four_kings"),
    ),
    event("turn_up", card=card("the new pack card")),
    event("skip", seat=seat("the seat that misses its turn")),
    event(
        "out", seat=seat(), place=integer(1, MAX_SEAT), finish=choice(*FINISHES), bonus=integer(0)
    ),
    event(
        "deal_end",
        deal=integer(1, MAX_DEALS),
        ending=choice("E1", "E2"),
        loser=nullable(seat()),
        penalty=integer(0),
        sides=per_seat(ref("SideScore")),
        scores=per_seat(integer(), "one entry per seat (after banking)"),
        discarded=cards("the bank, bottom to top"),
    ),
    event(
        "match_end",
        winner=nullable(seat()),
        winners=seats_ascending(),
        scores=per_seat(integer()),
    ),
    event(
        "deal",
        "The next deal, dealt in the same call.",
        deal=integer(1, MAX_DEALS),
        dealer=seat(),
        starter=seat(),
        card=card("the pack card"),
    ),
)

SHAPES = GameShapes(
    options=OPTIONS,
    state=STATE,
    view=VIEW,
    move=MOVE,
    legal_move=LEGAL_MOVE,
    side_score=SIDE_SCORE,
    events=EVENTS,
    named={
        "Trumps": obj(
            {
                "common": obj(
                    {suit: integer(0, 2) for suit in SUITS},
                    description="Each suit's class for everybody: 0 plain, 1 trump (junior), "
                    "2 senior trump.",
                ),
                "personal": per_seat(
                    nullable(choice(*SUITS)),
                    "per seat, its own trump suit under per_player, else null",
                ),
            }
        ),
        "Card": obj(
            {"card": card(), "by": nullable(seat())},
            description="A card of the bank and the seat that laid it (null for a pack card).",
        ),
        "Target": obj(
            {"card": card(), "by": nullable(seat()), "virtual": boolean()},
            description="The card to answer; virtual (by null) after a capture.",
        ),
        "Out": obj(
            {
                "seat": seat(),
                "place": integer(1, MAX_SEAT),
                "finish": choice(*FINISHES),
                "bonus": integer(0),
            }
        ),
        "Tiebreak": obj(
            {
                "eligible": seats_ascending(),
                "extra_deals": integer(0, EXTRA_DEALS),
            }
        ),
    },
)
