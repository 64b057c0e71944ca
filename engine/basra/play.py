"""Dealing, applying a move, the end of a round and of the match (spec §3, §4, §7, §9)."""

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from engine.basra.cards import DECK
from engine.basra.moves import (
    Move,
    TooManyMoves,
    canonical,
    card_moves,
    hand_moves,
    is_legal,
    make_move,
    sweeps,
)
from engine.basra.rules import INITIAL_TABLE, Rules
from engine.basra.scoring import card_points, final_breakdown, running_breakdown
from engine.basra.state import MATCH_OVER, MAX_ROUNDS, PLAYING, SIDES, State, side_of
from engine.cards import CardError, parse_card, shuffled, sort_cards
from engine.errors import GameError

Events = list[dict[str, Any]]


class MoveError(GameError):
    """A move that is not legal in the state it was played on."""


def shuffled_deck(seed: str, round_number: int) -> tuple[str, ...]:
    """The pack of a round, shuffled from the seed and the round number."""
    return shuffled(DECK, f"basra/{round_number}/{seed}")


def deal_hands(cards: tuple[str, ...], seats: int, dealer: int) -> tuple[tuple[str, ...], ...]:
    """One card at a time, from the seat after the dealer round to the dealer."""
    return tuple(canonical(cards[(seat - dealer - 1) % seats :: seats]) for seat in range(seats))


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


def new_game(rules: Rules, seats: int, seed: str) -> State:
    rules.check_seats(seats)
    dealer = seats - 1
    hands, table, stock = deal_round(rules, seats, dealer, shuffled_deck(seed, 1))
    return State(
        rules=rules, seats=seats, dealer=dealer, turn=(dealer + 1) % seats, hands=hands,
        table=table, stock=stock, captured=((),) * SIDES, basras=((),) * SIDES,
        last_capturer=None, scores=(0,) * SIDES, carry=0, round=1, status=PLAYING,
        winner=None, seed=seed,
    )  # fmt: skip


def is_final_card(state: State) -> bool:
    """Whether the card about to be played is the last of the round."""
    return not state.stock and sum(map(len, state.hands)) == 1


class LastListing:
    """The moves listed last and the state they were listed for. A caller that lists and
    then applies one of them (every computer player) has it trusted on that very state
    instead of searched again; the state is held, so its identity cannot pass to another."""

    entry: tuple[State | None, tuple[Move, ...]] = (None, ())


def legal_moves(state: State) -> list[Move]:
    if state.status != PLAYING:
        return []
    final = is_final_card(state)
    moves = hand_moves(state.hands[state.turn], state.table, state.rules, final)
    LastListing.entry = (state, tuple(moves))
    return moves


def read_move(state: State, move: Mapping[str, Any] | Move) -> Move:
    """The legal move that `move` names: a card from the mover's hand and, unless the card
    has one outcome only, its capture."""
    if state.status != PLAYING:
        raise MoveError("move", "the match is over")
    hand = state.hands[state.turn]
    if not hand:
        raise MoveError("move", "the round is played out; there is no card to play")
    if isinstance(move, Move):
        listed_for, listed = LastListing.entry
        if listed_for is state and move in listed:
            return move  # equal in every field to a move listed for this very state
        card, capture = move.card, move.capture
    elif isinstance(move, Mapping):
        card, capture = move.get("card"), move.get("capture")
        capture = None if capture is None else read_capture(capture)
    else:
        raise MoveError("move", "must be an object with 'card' and 'capture'")
    try:
        card = parse_card(card)
    except CardError as error:
        raise MoveError("move.card", str(error)) from error
    if card not in hand:
        raise MoveError("move.card", f"card not in hand: {card}", choices=sort_cards(hand))
    final = is_final_card(state)
    if capture is None:
        options = card_moves(card, state.table, state.rules, final)
        if len(options) == 1:
            return options[0]
        captures = captures_of(options)
        raise MoveError(
            "move.capture",
            f"{card} can take {either(captures)}: name one in move.capture",
            choices=captures,
        )
    if is_legal(card, capture, state.table, state.rules):
        return make_move(card, capture, state.table, state.rules, final)
    try:
        captures = captures_of(card_moves(card, state.table, state.rules, final))
    except TooManyMoves:
        reason = f"{card} cannot take {taking(capture)}; its captures are too many to list"
        raise MoveError("move.capture", reason) from None
    raise MoveError(
        "move.capture",
        f"{card} cannot take {taking(capture)}; it can take {either(captures)}",
        choices=captures,
    )


def taking(capture: Iterable[str]) -> str:
    """A capture in words: `3C + 6H`, or `nothing` for a card laid on the table."""
    return " + ".join(capture) or "nothing"


def either(captures: list[list[str]]) -> str:
    words = [taking(capture) for capture in captures]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def captures_of(options: list[Move]) -> list[list[str]]:
    return [list(option.capture) for option in options]


def read_capture(capture: object) -> tuple[str, ...]:
    if not isinstance(capture, list | tuple):
        raise MoveError("move.capture", "must be a list of table cards")
    cards = []
    for index, text in enumerate(capture):
        try:
            cards.append(parse_card(text))
        except CardError as error:
            raise MoveError(f"move.capture.{index}", str(error)) from error
    if len(set(cards)) != len(cards):
        raise MoveError("move.capture", "names a card more than once")
    return canonical(cards)


def replaced(items: tuple, index: int, item: Any) -> tuple:
    return (*items[:index], item, *items[index + 1 :])


def apply(state: State, move: Mapping[str, Any] | Move) -> tuple[State, Events]:
    """Play one move: the new state and what happened. Raises MoveError for an illegal move."""
    move = read_move(state, move)
    card, capture = move.card, move.capture
    # One unpacking instead of an attribute lookup per field.
    (rules, seats, dealer, seat, hands, table, stock, captured, basras, last_capturer,
     scores, carry, number, status, winner, seed) = state  # fmt: skip
    side = side_of(seat)
    hand = list(hands[seat])
    hand.remove(card)
    hands = replaced(hands, seat, tuple(hand))
    events: Events = [{"type": "move", "seat": seat, "card": card, "capture": list(capture)}]
    if capture:
        taken = set(capture)
        table = tuple([other for other in table if other not in taken])
        captured = replaced(captured, side, (*captured[side], *capture, card))
        last_capturer = seat
        events.append({"type": "capture", "seat": seat, "side": side,
                       "cards": sort_cards((*capture, card))})  # fmt: skip
        if move.basra:
            basras = replaced(basras, side, (*basras[side], (card, move.basra_points)))
            events.append({"type": "basra", "seat": seat, "side": side, "card": card,
                           "points": move.basra_points})  # fmt: skip
    else:
        table = (*table, card)
    # Built whole rather than by _replace, which copies field by field through a dict.
    state = State(
        rules, seats, dealer, (seat + 1) % seats, hands, table, stock, captured, basras,
        last_capturer, scores, carry, number, status, winner, seed,
    )  # fmt: skip
    if any(hands):
        return state, events
    if state.stock:
        return deal_again(state, events)
    return end_round(state, events)


def deal_again(state: State, events: Events) -> tuple[State, Events]:
    per_deal = state.rules.hand_size * state.seats
    state = state._replace(
        hands=deal_hands(state.stock[:per_deal], state.seats, state.dealer),
        stock=state.stock[per_deal:],
        turn=(state.dealer + 1) % state.seats,
    )
    events.append(deal_event(state))
    return state, events


def deal_event(state: State, **public: Any) -> dict[str, Any]:
    """A deal as everyone may see it: sizes only, never the cards dealt to a hand."""
    return {"type": "deal", "round": state.round, "dealer": state.dealer,
            "hand_size": state.rules.hand_size, "stock": len(state.stock), **public}  # fmt: skip


def sweep_leftovers(state: State) -> tuple[int, tuple[tuple[str, ...], ...]]:
    """The table goes to the last capturer's side, never as a basra (§7.2); the dealer's
    side is only a defensive fallback."""
    taker = state.dealer if state.last_capturer is None else state.last_capturer
    side = side_of(taker)
    return taker, replaced(state.captured, side, state.captured[side] + state.table)


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


def next_seed(state: State) -> str:
    """A state without a seed deals from a digest of itself (contract: `seed`)."""
    if state.seed is not None:
        return state.seed
    text = json.dumps(state.to_json(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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


def score(state: State) -> list[dict[str, Any]]:
    """The contract's per-side breakdown of the round as it stands."""
    if state.status == PLAYING and (any(state.hands) or state.stock):
        return running_breakdown(state.captured, state.basras, state.carry, state.rules)
    _, piles = sweep_leftovers(state)
    return final_breakdown(piles, state.basras, state.carry, state.rules)[0]


def view(state: State, seat: int | None) -> dict[str, Any]:
    """What one seat may see: its own hand, counts of the others and of the stock, no seed.
    A spectator (seat None) sees no hand at all."""
    data = state.to_json()
    del data["hands"], data["stock"]
    data.pop("seed", None)
    data["seat"] = seat
    if seat is not None:
        data["hand"] = sort_cards(state.hands[seat])
    data["hand_sizes"] = [len(hand) for hand in state.hands]
    data["stock_size"] = len(state.stock)
    return data


def write_move(state: State, move: Move) -> dict[str, Any]:
    """A move's JSON form with what it earns at once: its basra points, plus the card
    points of the cards it takes when card points are on."""
    taken = (*move.capture, move.card) if move.capture else ()
    points = move.basra_points + (card_points(taken) if state.rules.card_points else 0)
    return {"card": move.card, "capture": list(move.capture), "basra": move.basra,
            "basra_points": move.basra_points, "points": points}  # fmt: skip
