"""Bank's card data: the 36-card pack, the game order, card points and the runs (spec §0, §1,
§7.3), as per-card tables so the rules never re-parse a card."""

from typing import Final

from engine.cards import SUITS, deck

DECK: Final[tuple[str, ...]] = deck("6789TJQKA")
CARDS: Final = frozenset(DECK)
# Game order, low to high: the ten sits between the king and the ace.
GAME_ORDER: Final = "6789JQKTA"
HEIGHT: Final[dict[str, int]] = {card: GAME_ORDER.index(card[0]) for card in DECK}
RANK: Final[dict[str, str]] = {card: card[0] for card in DECK}
SUIT: Final[dict[str, str]] = {card: card[1] for card in DECK}
RANK_POINTS: Final = {"A": 12, "T": 10, "K": 5, "Q": 3, "J": 1}
POINTS: Final[dict[str, int]] = {card: RANK_POINTS.get(card[0], 0) for card in DECK}
EIGHT: Final = "8"
SEVEN: Final = "7"
KING: Final = "K"

# Every run, low to high: four consecutive ranks of the game order in one suit.
RUNS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(rank + suit for rank in GAME_ORDER[start : start + 4])
    for suit in SUITS
    for start in range(len(GAME_ORDER) - 3)
)
RUNS_OF_SUIT: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    suit: tuple(run for run in RUNS if run[0][1] == suit) for suit in SUITS
}
QUADS: Final[dict[str, tuple[str, ...]]] = {
    rank: tuple(rank + suit for suit in SUITS) for rank in GAME_ORDER
}


def points(cards) -> int:
    """The card points of the cards (A 12, T 10, K 5, Q 3, J 1)."""
    return sum(POINTS[card] for card in cards)
