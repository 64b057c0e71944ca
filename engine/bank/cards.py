"""Bank's card data: the 36-card pack, the game order, card points and the runs (spec §0, §1,
§7.3), as per-card tables so the rules never re-parse a card."""

from engine.cards import SUITS, deck

DECK: tuple[str, ...] = deck("6789TJQKA")
CARDS = frozenset(DECK)
# Game order, low to high: the ten sits between the king and the ace.
GAME_ORDER = "6789JQKTA"
HEIGHT: dict[str, int] = {card: GAME_ORDER.index(card[0]) for card in DECK}
RANK: dict[str, str] = {card: card[0] for card in DECK}
SUIT: dict[str, str] = {card: card[1] for card in DECK}
RANK_POINTS = {"A": 12, "T": 10, "K": 5, "Q": 3, "J": 1}
POINTS: dict[str, int] = {card: RANK_POINTS.get(card[0], 0) for card in DECK}
EIGHT, SEVEN, KING = "8", "7", "K"

# Every run, low to high: four consecutive ranks of the game order in one suit.
RUNS: tuple[tuple[str, ...], ...] = tuple(
    tuple(rank + suit for rank in GAME_ORDER[start : start + 4])
    for suit in SUITS
    for start in range(len(GAME_ORDER) - 3)
)
RUNS_OF_SUIT: dict[str, tuple[tuple[str, ...], ...]] = {
    suit: tuple(run for run in RUNS if run[0][1] == suit) for suit in SUITS
}
QUADS: dict[str, tuple[str, ...]] = {
    rank: tuple(rank + suit for suit in SUITS) for rank in GAME_ORDER
}


def points(cards) -> int:
    """The card points of the cards (A 12, T 10, K 5, Q 3, J 1)."""
    return sum(POINTS[card] for card in cards)
