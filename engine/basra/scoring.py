"""The round breakdown of spec §8: card points, the majority, basras, the carry."""

from operator import itemgetter
from typing import Any, Final

from engine.basra.rules import DECK_SIZE, Rules
from engine.basra.state import PLAYING, State, side_of
from engine.game import replaced

CARD_POINTS: Final = {"2C": 2, "TD": 3}
# The points of a basra record (card, points).
BASRA_POINTS: Final = itemgetter(1)


def card_items(pile: tuple[str, ...], rules: Rules) -> tuple[int, int, int, int]:
    """The pile's card points, item by item: jacks, aces, two of clubs, ten of diamonds."""
    if not rules.card_points:
        return 0, 0, 0, 0
    # Every card is its rank then its suit: the ranks are every other character, counted
    # in C rather than card by card (this was half the cost of a round's end). No suit is a
    # rank, so a card found in the cards written end to end is a card of the pile: found
    # there in C, not compared with each card of the pile in turn.
    cards = "".join(pile)
    ranks = cards[::2]
    two_clubs = CARD_POINTS["2C"] * ("2C" in cards)
    return ranks.count("J"), ranks.count("A"), two_clubs, CARD_POINTS["TD"] * ("TD" in cards)


def card_points(cards: tuple[str, ...]) -> int:
    """Points the cards carry when card points are on: J 1, A 1, 2C 2, TD 3."""
    return sum(CARD_POINTS.get(card, card[0] in "JA") for card in cards)


def side_breakdown(
    pile: tuple[str, ...], basras: tuple[tuple[str, int], ...], majority: int, rules: Rules
) -> dict[str, Any]:
    jacks, aces, two_clubs, ten_diamonds = card_items(pile, rules)
    made = sum(map(BASRA_POINTS, basras))
    # One dict written whole, its total summed from its items as they are named.
    total = majority + jacks + aces + two_clubs + ten_diamonds + made
    return {"cards": len(pile), "majority": majority, "jacks": jacks, "aces": aces,
            "two_clubs": two_clubs, "ten_diamonds": ten_diamonds, "basras": made,
            "total": total}  # fmt: skip


def void_breakdown(pile: tuple[str, ...]) -> dict[str, Any]:
    items = {"majority": 0, "jacks": 0, "aces": 0, "two_clubs": 0, "ten_diamonds": 0, "basras": 0}
    return {"cards": len(pile), **items, "total": 0}


def majority_side(piles: tuple[tuple[str, ...], ...]) -> int | None:
    """The one side with strictly more cards than every other, if any."""
    sizes = [len(pile) for pile in piles]
    best = max(sizes)
    return sizes.index(best) if sizes.count(best) == 1 else None


def final_breakdown(
    piles: tuple[tuple[str, ...], ...],
    basras: tuple[tuple[tuple[str, int], ...], ...],
    carry: int,
    rules: Rules,
) -> tuple[list[dict[str, Any]], int]:
    """The finished round's breakdown per side and the carry left for the next round."""
    winner = majority_side(piles)
    if winner is None and rules.tie_policy == "void_round_carry":
        return [void_breakdown(pile) for pile in piles], carry + rules.majority_points
    if winner is None:
        carried = carry + rules.majority_points if rules.tie_policy == "carry" else carry
        return [side_breakdown(p, b, 0, rules) for p, b in zip(piles, basras)], carried
    majority = rules.majority_points + carry
    sides = [
        side_breakdown(pile, records, majority if side == winner else 0, rules)
        for side, (pile, records) in enumerate(zip(piles, basras))
    ]
    return sides, 0


def running_breakdown(
    piles: tuple[tuple[str, ...], ...],
    basras: tuple[tuple[tuple[str, int], ...], ...],
    carry: int,
    rules: Rules,
) -> list[dict[str, Any]]:
    """What each side has earned so far; the majority only once nobody can take it away."""
    return [
        side_breakdown(
            pile, records, rules.majority_points + carry if 2 * len(pile) > DECK_SIZE else 0, rules
        )
        for pile, records in zip(piles, basras)
    ]


def sweep_leftovers(state: State) -> tuple[int, tuple[tuple[str, ...], ...]]:
    """The table goes to the last capturer's side, never as a basra (§7.2); the dealer's
    side is only a defensive fallback."""
    taker = state.dealer if state.last_capturer is None else state.last_capturer
    side = side_of(taker)
    return taker, replaced(state.captured, side, state.captured[side] + state.table)


def score(state: State) -> list[dict[str, Any]]:
    """The contract's per-side breakdown of the round as it stands."""
    if state.status == PLAYING and (any(state.hands) or state.stock):
        return running_breakdown(state.captured, state.basras, state.carry, state.rules)
    _, piles = sweep_leftovers(state)
    return final_breakdown(piles, state.basras, state.carry, state.rules)[0]
