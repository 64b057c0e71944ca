"""Basra's shapes, declared once (engine/shapes.py): its state, a seat's view, a move as
sent and as listed, one side's score and its events. The service derives openapi.yaml and
its request checks from them; the rule options are declared in engine/basra/rules.py."""

from engine.basra.rules import OPTIONS, SEAT_COUNTS
from engine.basra.state import MATCH_OVER, MAX_ROUNDS, PLAYING, SIDES
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


def seat(description: str = "") -> dict:
    return integer(0, MAX_SEAT, description)


def side(description: str = "") -> dict:
    return integer(0, SIDES - 1, description)


def per_side(shape: dict, description: str) -> dict:
    return array(shape, description, minItems=SIDES, maxItems=SIDES)


def per_seat(shape: dict, description: str = "one per seat") -> dict:
    return array(shape, description, minItems=min(SEAT_COUNTS), maxItems=max(SEAT_COUNTS))


# What a state and a view share: everything public.
PUBLIC = {
    "game": const("basra"),
    "rules": ref("ResolvedRules"),
    "seats": choice(*SEAT_COUNTS, description="2, or 4 where allowed"),
    "dealer": seat(),
    "turn": nullable(seat("null once the match is over")),
}
PILES = {
    "table": cards("in the order they arrived"),
    "captured": per_side(cards(), "one per side"),
    "basras": per_side(array(ref("Basra")), "one per side: the basras it made"),
    "last_capturer": nullable(seat("the seat that captured last")),
    "scores": per_side(integer(0), "one per side, banked"),
    "carry": integer(0, description="points carried over from a tied round"),
    "round": integer(1, MAX_ROUNDS),
    "status": choice(PLAYING, MATCH_OVER),
    "winner": nullable(side("the winning side, once over")),
}

STATE = obj(
    {
        **PUBLIC,
        "hands": per_seat(cards()),
        **PILES,
        "stock": cards("the next to be dealt first"),
        "seed": seed("what later deals derive from"),
    },
    optional=("seed",),
    description="A whole Basra game. Post it back as the server wrote it; the server checks "
    "that it is self-consistent (every card exactly once, hand sizes, turn...) and answers "
    "422 naming the field when it is not. Cards: rank then suit, e.g. 7D, TD.",
)
VIEW = obj(
    {
        **PUBLIC,
        **PILES,
        "seat": nullable(seat("the seat this view is for; null for a spectator")),
        "hand": cards("the seat's own cards (a seat's view only)"),
        "hand_sizes": per_seat(integer(0), "per seat"),
        "stock_size": integer(0),
    },
    optional=("hand",),
    description="What one seat may see: no other hand, no stock, no seed. A spectator (seat "
    "null) sees no hand at all.",
)
MOVE = obj(
    {
        "card": card("a card from the mover's hand"),
        "capture": cards(
            "the table cards taken ([] to lay the card on the table); may be omitted when "
            "the card has exactly one legal outcome"
        ),
        "basra": boolean("ignored: the server works it out"),
        "basra_points": integer(description="ignored"),
        "points": integer(description="ignored"),
    },
    optional=("capture", "basra", "basra_points", "points"),
    description="A move to play; a move as legal-moves wrote it is accepted back as it is.",
)
LEGAL_MOVE = obj(
    {
        "card": card(),
        "capture": cards("in canonical order"),
        "basra": boolean(),
        "basra_points": integer(0),
        "points": integer(0, description="what the move earns at once"),
    }
)
ITEMS = ("majority", "jacks", "aces", "two_clubs", "ten_diamonds", "basras", "total")
SIDE_SCORE = obj({"cards": integer(0), **{item: integer(0) for item in ITEMS}})

EVENTS = (
    obj(
        {"type": const("move"), "seat": seat(), "card": card(), "capture": cards()},
        description="A seat played a card; `capture` is [] when it was laid on the table.",
    ),
    obj(
        {"type": const("capture"), "seat": seat(), "side": side(), "cards": cards()},
        description="The cards a capture took, the played card included.",
    ),
    obj(
        {
            "type": const("basra"),
            "seat": seat(),
            "side": side(),
            "card": card(),
            "points": integer(0),
        },
        description="The capture was a basra.",
    ),
    obj(
        {
            "type": const("deal"),
            "round": integer(1, MAX_ROUNDS),
            "dealer": seat(),
            "hand_size": integer(1),
            "stock": integer(0, description="cards left in the stock"),
            "table": cards("a new round only: the table it starts with"),
        },
        optional=("table",),
        description="Fresh hands were dealt (sizes only); a new round also shows its table.",
    ),
    obj(
        {
            "type": const("round_end"),
            "round": integer(1, MAX_ROUNDS),
            "sweep": ref("Sweep"),
            "sides": per_side(ref("SideScore"), "one per side"),
            "scores": per_side(integer(0), "one per side, banked"),
            "carry": integer(0),
        },
        description="The round's breakdown, banked into `scores`.",
    ),
    obj(
        {
            "type": const("match_end"),
            "winner": side(),
            "scores": per_side(integer(0), "one per side"),
        },
        description="The match is over: the winning side and the final scores.",
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
        "Basra": obj({"card": card(), "points": integer(0)}, description="a basra made"),
        "Sweep": obj(
            {"seat": seat(), "side": side(), "cards": cards()},
            description="the table left at the round's end, to the last capturer's side",
        ),
    },
)
