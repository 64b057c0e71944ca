"""Dealing, applying a move, the end of a round and of the match (spec §3, §4, §7, §9)."""

from itertools import filterfalse
from typing import Any, Final

from engine.basra.cards import DECK
from engine.basra.moves import LISTED, Move, canonical, named_move, sweeps
from engine.basra.rules import INITIAL_TABLE, SEAT_COUNTS, Rules
from engine.basra.scoring import final_breakdown, sweep_leftovers
from engine.basra.state import MATCH_OVER, MAX_ROUNDS, PLAYING, SIDES, State, side_of
from engine.cards import shuffled, sort_cards
from engine.game import next_seed, replaced

Events = list[dict[str, Any]]


def shuffled_deck(seed: str, round_number: int) -> tuple[str, ...]:
    """The pack of a round, shuffled from the seed and the round number."""
    return shuffled(DECK, f"basra/{round_number}/{seed}")


# Each seat's share of a deal by seat count and dealer, as slices of the dealt cards: one
# card at a time, from the seat after the dealer round to the dealer.
SHARES: Final[dict[tuple[int, int], tuple[slice, ...]]] = {
    (seats, dealer): tuple(slice((seat - dealer - 1) % seats, None, seats) for seat in range(seats))
    for seats in SEAT_COUNTS
    for dealer in range(seats)
}


def deal_hands(cards: tuple[str, ...], seats: int, dealer: int) -> tuple[tuple[str, ...], ...]:
    """One card at a time, from the seat after the dealer round to the dealer (each hand in
    canonical order); sliced in C rather than by a generator, a Python function per deal."""
    return tuple(map(canonical, map(cards.__getitem__, SHARES[seats, dealer])))


def deal_round(
    rules: Rules, seats: int, dealer: int, deck: tuple[str, ...]
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], tuple[str, ...]]:
    """Hands, table and stock of a fresh round."""
    dealt = rules.hand_size * seats
    rest = list(deck[dealt:])
    table: list[str] = []
    while len(table) < INITIAL_TABLE:
        card = rest.pop(0)
        if rules.initial_table_redeal and sweeps(card, rules):  # buried like a sweeper (§3.2)
            rest.append(card)
        else:
            table.append(card)
    return deal_hands(deck[:dealt], seats, dealer), tuple(table), tuple(rest)


def new_game(rules: Rules, seats: object, seed: str) -> State:
    seats = rules.check_seats(seats)
    dealer = seats - 1
    hands, table, stock = deal_round(rules, seats, dealer, shuffled_deck(seed, 1))
    return State(
        rules=rules, seats=seats, dealer=dealer, turn=(dealer + 1) % seats, hands=hands,
        table=table, stock=stock, captured=((),) * SIDES, basras=((),) * SIDES,
        last_capturer=None, scores=(0,) * SIDES, carry=0, round=1, status=PLAYING,
        winner=None, seed=seed,
    )  # fmt: skip


def apply(state: State, move: Any) -> tuple[State, Events]:
    """Play one move (a Move or its JSON form, any value named_move reads or refuses): the
    new state and what happened. Raises MoveError for an illegal move."""
    listed_for, listed = LISTED.entry  # LISTED.listed's test, a Python call less per move
    if listed_for is not state or move not in listed:
        move = named_move(state, move)  # not just listed for this state: checked in full
    # Typed, so that the compiled build unpacks it as the tuple it is, not by iteration.
    played: Move = move
    card, capture, basra, basra_points = played
    # One unpacking instead of an attribute lookup per field.
    (rules, seats, dealer, seat, hands, table, stock, captured, basras, last_capturer,
     scores, carry, number, status, winner, seed) = state  # fmt: skip
    assert seat is not None, "a legal move has a seat to make it"
    hand = hands[seat]
    at = hand.index(card)
    left = hand[:at] + hand[at + 1 :]
    hands = (*hands[:seat], left, *hands[seat + 1 :])  # replaced's, a Python call less
    events: Events = [{"type": "move", "seat": seat, "card": card, "capture": list(capture)}]
    if capture:
        side = side_of(seat)
        # A capture is a few cards: looked up in its tuple, no set is worth making; filtered
        # in C rather than by a comprehension, which is a Python function of its own.
        table = tuple(filterfalse(capture.__contains__, table))
        pile = (*captured[side], *capture, card)
        captured = (*captured[:side], pile, *captured[side + 1 :])  # replaced's, inline
        last_capturer = seat
        events.append({"type": "capture", "seat": seat, "side": side,
                       "cards": sort_cards((*capture, card))})  # fmt: skip
        if basra:
            basras = replaced(basras, side, (*basras[side], (card, basra_points)))
            events.append({"type": "basra", "seat": seat, "side": side, "card": card,
                           "points": basra_points})  # fmt: skip
    else:
        table = (*table, card)
    turn = (seat + 1) % seats
    played_out = not left and not any(hands)  # every hand is looked at only when this one is empty
    if played_out and stock:
        # The round's next deal (§4.6), from the dealer's left, made in the same new state.
        per_deal = rules.hand_size * seats
        hands, stock = deal_hands(stock[:per_deal], seats, dealer), stock[per_deal:]
        turn = (dealer + 1) % seats
    # Built whole rather than by _replace, which copies field by field through a dict, and
    # as the tuple it is: State's own __new__ is a Python function that takes every field by
    # name only to call this (a tenth of a move's apply).
    state = tuple.__new__(State, (
        rules, seats, dealer, turn, hands, table, stock, captured, basras, last_capturer,
        scores, carry, number, status, winner, seed,
    ))  # fmt: skip
    if not played_out:
        return state, events
    if any(hands):
        events.append(deal_event(state))
        return state, events
    return end_round(state, events)


def deal_event(state: State, **public: Any) -> dict[str, Any]:
    """A deal as everyone may see it: sizes only, never the cards dealt to a hand."""
    return {"type": "deal", "round": state.round, "dealer": state.dealer,
            "hand_size": state.rules.hand_size, "stock": len(state.stock), **public}  # fmt: skip


def match_winner(
    scores: tuple[int, ...], rules: Rules, round_number: int, sweeper: int
) -> int | None:
    """The side that wins once a round is banked (§9), None while the match goes on. At the
    round cap the match ends whatever the scores: the highest total wins, and a tie goes to
    the side that took the last round's leftovers (`sweeper`), so a winner always exists."""
    best = max(scores)
    if best >= rules.target_score and scores.count(best) == 1:
        return scores.index(best)
    if round_number < MAX_ROUNDS:
        return None
    return sweeper if scores[sweeper] == best else scores.index(best)


def end_round(state: State, events: Events) -> tuple[State, Events]:
    taker, piles = sweep_leftovers(state)
    sides, carry = final_breakdown(piles, state.basras, state.carry, state.rules)
    scores = tuple(score + side["total"] for score, side in zip(state.scores, sides))
    events.append({
        "type": "round_end", "round": state.round,
        "sweep": {"seat": taker, "side": side_of(taker), "cards": sort_cards(state.table)},
        "sides": sides, "scores": list(scores), "carry": carry,
    })  # fmt: skip
    state = state._replace(table=(), captured=piles, scores=scores, carry=carry)
    winner = match_winner(scores, state.rules, state.round, side_of(taker))
    if winner is not None:
        events.append({"type": "match_end", "winner": winner, "scores": list(scores)})
        return state._replace(turn=None, status=MATCH_OVER, winner=winner), events
    return next_round(state, events)


def next_round(state: State, events: Events) -> tuple[State, Events]:
    dealer, number = (state.dealer + 1) % state.seats, state.round + 1
    deck = shuffled_deck(next_seed(state), number)
    hands, table, stock = deal_round(state.rules, state.seats, dealer, deck)
    state = state._replace(
        dealer=dealer, turn=(dealer + 1) % state.seats, hands=hands, table=table, stock=stock,
        captured=((),) * SIDES, basras=((),) * SIDES, last_capturer=None, round=number,
    )  # fmt: skip
    events.append(deal_event(state, table=list(table)))
    return state, events
