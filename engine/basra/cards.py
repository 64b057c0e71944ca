"""Basra's card data: the 52-card pack, the numeral values and the seven of diamonds."""

from engine.cards import RANKS, deck

DECK: tuple[str, ...] = deck()
FACES = frozenset("JQK")
# A numeral's value for sum captures (ace 1 ... ten 10); faces have none.
VALUE: dict[str, int] = {
    card: (0 if card[0] in FACES else RANKS.index(card[0]) + 1) for card in DECK
}
SEVEN_OF_DIAMONDS = "7D"
