"""Every shape of Tricks, declared once: the service documents and checks from these."""

from engine.shapes import (
    GameShapes,
    array,
    card,
    cards,
    choice,
    const,
    integer,
    nullable,
    obj,
    ref,
    string,
)

from .rules import OPTIONS, SEAT_COUNTS
from .state import MATCH_OVER, PLAYING

SEAT = integer(0, max(SEAT_COUNTS) - 1)


def per_seat(shape: dict) -> dict:
    return array(shape, "one per seat", minItems=min(SEAT_COUNTS), maxItems=max(SEAT_COUNTS))


PUBLIC = {
    "game": const("tricks"),
    "rules": ref("ResolvedRules"),
    "seats": choice(*SEAT_COUNTS),
    "trick": cards("the trick in play, from the leader's card on"),
    "leader": SEAT,
    "turn": nullable(SEAT),
    "won": per_seat(cards("the cards of the tricks the seat took")),
    "status": choice(PLAYING, MATCH_OVER),
}
MOVE = obj({"card": card("a card from the mover's hand")}, description="A card to play.")

SHAPES = GameShapes(
    options=OPTIONS,
    state=obj(
        {**PUBLIC, "hands": per_seat(cards()), "seed": string("what the deal derives from")},
        optional=("seed",),
    ),
    view=obj(
        {
            **PUBLIC,
            "seat": nullable(SEAT),
            "hand": cards("the seat's own cards (a seat's view only)"),
            "hand_sizes": per_seat(integer(0)),
            "scores": per_seat(integer(0, description="points banked: 0 until the deal ends")),
        },
        optional=("hand",),
    ),
    move=MOVE,
    legal_move=MOVE,
    side_score=obj({"tricks": integer(0), "total": integer(0)}),
    events=(
        obj({"type": const("play"), "seat": SEAT, "card": card()}),
        obj({"type": const("trick"), "winner": SEAT, "card": card("the card that took it")}),
        obj({"type": const("match_end"), "scores": per_seat(integer(0))}),
    ),
)
