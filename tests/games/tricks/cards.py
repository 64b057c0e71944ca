"""The 24-card pack, nine to ace, and the order that decides a trick."""

from engine.cards import deck

DECK: tuple[str, ...] = deck("9TJQKA")
CARDS = frozenset(DECK)
ORDER = "9TJQKA"
HEIGHT: dict[str, int] = {card: ORDER.index(card[0]) for card in DECK}
