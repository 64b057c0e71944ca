"""Basra's card data: the 52-card pack, the numeral values and the seven of diamonds."""

from typing import Final

from engine.cards import RANKS, deck

DECK: Final[tuple[str, ...]] = deck()
FACES: Final = frozenset("JQK")
# A numeral's value for sum captures (ace 1 ... ten 10); faces have none.
VALUE: Final[dict[str, int]] = {
    card: (0 if card[0] in FACES else RANKS.index(card[0]) + 1) for card in DECK
}
SEVEN_OF_DIAMONDS: Final = "7D"
