"""Scoring a deal (spec §11.2, §12): captured card points, the finishing bonus, the
loser's penalty."""

from typing import Any

from engine.bank.cards import POINTS, points
from engine.bank.state import MATCH_OVER, State


def from_left(dealer: int, seats: int) -> list[int]:
    """Every seat from the dealer's left round to the dealer."""
    return [(dealer + offset) % seats for offset in range(1, seats + 1)]


def loser_of(state: State) -> int | None:
    """§11.2: the last holder, or after a blocked deal the holder with the most card points
    in hand, ties to the first from the dealer's left (None if no seat holds a card)."""
    holders = state.holders()
    if len(holders) == 1:
        return holders[0]
    best = None
    for seat in from_left(state.dealer, state.seats):
        if state.hands[seat] and (best is None or in_hand(state, seat) > in_hand(state, best)):
            best = seat
    return best


def in_hand(state: State, seat: int) -> int:
    return points(state.hands[seat])


def penalty_of(state: State, seat: int) -> int:
    """§12.2: what the loser pays."""
    rules = state.rules
    if not rules.hand_penalty:
        return 0
    if rules.penalty_mode == "fixed":
        return rules.fixed_penalty
    if rules.penalty_mode == "per_card":
        return rules.per_card_penalty * len(state.hands[seat])
    return in_hand(state, seat)


def breakdown(state: State, loser: int | None) -> list[dict[str, Any]]:
    """Per seat: captured points, finish, place, bonus, penalty (the loser's only) and
    total (§12)."""
    out = {entry.seat: entry for entry in state.out}
    sides = []
    for seat, pile in enumerate(state.captured):
        captured = sum(POINTS[card] for card in pile)
        entry = out.get(seat)
        bonus = entry.bonus if entry else 0
        penalty = penalty_of(state, seat) if seat == loser else 0
        sides.append({
            "captured_points": captured,
            "finish": entry.finish if entry else None,
            "place": entry.place if entry else None,
            "bonus": bonus,
            "penalty": penalty,
            "total": captured + bonus - penalty,
        })  # fmt: skip
    return sides


def score(state: State) -> list[dict[str, Any]]:
    """The deal as it stands (every penalty 0), or on a finished match the final deal's
    breakdown, the loser's penalty included."""
    return breakdown(state, loser_of(state) if state.status == MATCH_OVER else None)
