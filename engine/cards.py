"""Cards as two-character strings (rank then suit), their values and canonical order."""

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
FACES = frozenset("JQK")

# Canonical order: suit C < D < H < S, then rank A < 2 < ... < K.
DECK: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
ORDER: dict[str, int] = {card: index for index, card in enumerate(DECK)}
VALUE: dict[str, int] = {
    card: (0 if card[0] in FACES else RANKS.index(card[0]) + 1) for card in DECK
}
SEVEN_OF_DIAMONDS = "7D"


class CardError(ValueError):
    """A string that is not a card."""


def parse_card(text: object) -> str:
    """Read a card in any accepted input form (`7D`, `7d`, `10d`) into its canonical form."""
    if isinstance(text, str):
        if text in ORDER:
            return text
        card = text.upper().replace("10", "T", 1) if len(text) == 3 else text.upper()
        if card in ORDER:
            return card
    raise CardError(f"not a card: {text!r}")


def sort_cards(cards: Iterable[str]) -> list[str]:
    return sorted(cards, key=ORDER.__getitem__)
