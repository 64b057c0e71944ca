"""Dealing, applying a move step by step (spec §16), the end of a deal, scoring and the
end of the match (§4, §8–§14)."""

from typing import Any, Final, cast

from engine.bank.cards import DECK, EIGHT, HEIGHT, KING, SEVEN, SUIT, points
from engine.bank.moves import (
    DRAW,
    LAY,
    LISTED,
    PASS,
    QUAD,
    Move,
    is_trump_king,
    named_move,
)
from engine.bank.rules import Rules, check_seats
from engine.bank.scoring import breakdown, from_left, loser_of
from engine.bank.state import (
    BONUS,
    COMMON,
    EXTRA_DEALS,
    MATCH_OVER,
    MAX_DEALS,
    PLAYING,
    Entry,
    Out,
    State,
    Target,
    Tiebreak,
    canonical,
)
from engine.cards import SUITS, shuffled
from engine.game import next_seed, replaced

Events = list[dict[str, Any]]
HAND_SIZE: Final = 4


def first_player(hands: tuple[tuple[str, ...], ...], pack: str, dealer: int) -> int:
    """§4.3: a seat holding a lower card of the pack card's suit, else a higher one, else
    the dealer's left; ties go to the first from the dealer's left."""
    order = from_left(dealer, len(hands))
    suit, height = SUIT[pack], HEIGHT[pack]
    for lower in (True, False):
        for seat in order:
            if any(SUIT[c] == suit and (HEIGHT[c] < height) == lower for c in hands[seat]):
                return seat
    return order[0]


def dealt(state: State, dealer: int, number: int, seed: str) -> State:
    """`state` with deal `number` dealt by `dealer` from the seed: four cards each from the
    dealer's left, one at a time, then the pack card and the stock (§4.2)."""
    seats = state.seats
    pack = shuffled(DECK, f"bank/{number}/{seed}")
    size = HAND_SIZE * seats
    hands = tuple(
        canonical(pack[(seat - dealer - 1) % seats : size : seats]) for seat in range(seats)
    )
    starter = first_player(hands, pack[size], dealer)
    return state._replace(
        dealer=dealer, hands=hands, stock=pack[size + 1 :], bank=(Entry(pack[size], None),),
        target=Target(pack[size], None, False), turn=starter, drawn=False, out=(),
        captured=((),) * seats, idle=0, starter=starter, deal=number,
    )  # fmt: skip


def new_game(rules: Rules, seats: object, seed: str) -> State:
    """Deal 1 of a fresh match: trumps and the first dealer drawn from the seed (§2.2, §4.1).

    :raises RulesError: `seats` is not 2, 3 or 4.
    """
    seats = check_seats(seats)
    suits = shuffled(SUITS, f"bank/trumps/{seed}")
    mode = rules.trump_mode
    common = (
        cast(tuple[int, int, int, int], tuple(int(s == suits[0]) for s in SUITS))
        if mode == "single"
        else COMMON[mode]
    )
    personal = tuple(suits[:seats]) if mode == "per_player" else (None,) * seats
    dealer = int(shuffled([str(seat) for seat in range(seats)], f"bank/dealer/{seed}")[0])
    state = State(
        rules=rules, seats=seats, dealer=dealer, common=common, personal=personal, hands=(),
        stock=(), bank=(), target=None, turn=None, drawn=False, out=(), captured=(), idle=0,
        starter=dealer, scores=(0,) * seats, deal=1, status=PLAYING, winner=None, winners=(),
        tiebreak=None, seed=seed,
    )  # fmt: skip
    return dealt(state, dealer, 1, seed)


def next_holder(hands: tuple[tuple[str, ...], ...], seat: int) -> int:
    """The next seat after `seat` (clockwise) that still holds cards."""
    seats = len(hands)
    for offset in range(1, seats + 1):
        other = (seat + offset) % seats
        if hands[other]:
            return other
    raise AssertionError("nobody holds cards")


def finish_of(move: Move, common: tuple[int, ...], own_trump: str | None) -> str:
    """The finish type of the play that empties a hand (§10.1)."""
    top = move.cards[-1]
    if move.type == QUAD:
        return "four_kings" if top[0] == KING else "quad"
    if move.type != LAY:
        return "run"
    if top[0] != KING:
        return "plain"
    return "trump_king" if is_trump_king(top, common, own_trump) else "king"


def draw_event(seat: int, card: str, forced: bool) -> dict[str, Any]:
    return {"type": "draw", "seat": seat, "card": card, "forced": forced}


def apply(state: State, move: object, *, deal_next: bool = True) -> tuple[State, Events]:
    """Play one move (a Move of `legal_moves` or its JSON form): the new state and the
    events, exactly the steps of §16. With `deal_next` false, a move that ends a deal
    leaves it scored with nobody to move instead of dealing the next one: a playout of the
    deal (search.py) has no use for the next deal, which would cost it a tenth of its time.

    :raises MoveError: the move is not legal; nothing changes.
    """
    # A move just listed for this very state is trusted (LISTED.entry read here, not through
    # a method: a Python call less per move of a playout); any other is read in full.
    listed_for, listed = LISTED.entry
    if type(move) is Move and listed_for is state and move in listed:
        played = move
    else:
        played = named_move(state, move)
    seat = state.turn
    assert seat is not None, "a legal move has a seat to make it"
    hands, stock, bank, target = state.hands, state.stock, state.bank, state.target
    if played.type == DRAW:
        card = stock[0]
        hands = replaced(hands, seat, canonical((*hands[seat], card)))
        after = moved(state, hands=hands, stock=stock[1:], bank=bank, target=target, turn=seat,
                      drawn=True, out=state.out, captured=state.captured, idle=0)  # fmt: skip
        return after, [draw_event(seat, card, False)]
    rules = state.rules
    captured, idle, out = state.captured, state.idle, state.out
    events: Events = []
    taken = False
    seven = False
    if played.type == PASS:
        events.append({"type": PASS, "seat": seat})
        idle += 1
        owner = None if target is None or target.virtual else target.by
        if owner is not None and owner != seat and len(bank) >= 2:
            captured, target, idle = take_bank(rules, bank, captured, owner, PASS, idle, events)
            bank, taken = (), True
    else:
        cards = played.cards
        hand = tuple([card for card in hands[seat] if card not in cards])
        hands = replaced(hands, seat, hand)
        # Built as the tuples they are: a NamedTuple's own __new__ is a Python function that
        # only calls tuple.__new__ (1.5 % of the instructions of a move in random playouts).
        bank = (*bank, *[tuple.__new__(Entry, (card, seat)) for card in cards])
        top = cards[-1]
        target, idle = tuple.__new__(Target, (top, seat, False)), 0
        if played.type == LAY:
            events.append({"type": LAY, "seat": seat, "card": top})
        else:
            events.append({"type": played.type, "seat": seat, "cards": list(cards)})
        if not hand:
            finish = finish_of(played, state.common, state.personal[seat])
            place = len(out) + 1
            entry = Out(seat, place, finish, BONUS[finish][place - 1])
            out = (*out, entry)
            events.append({"type": "out", **entry._asdict()})
            if finish in ("trump_king", "four_kings"):
                captured, target, idle = take_bank(
                    rules, bank, captured, seat, finish, idle, events
                )
                bank, taken = (), True
            seven = bool(bank) and bank[-1].card[0] == SEVEN
        elif played.type == QUAD or (played.type == LAY and top[0] == EIGHT):
            after = moved(state, hands=hands, stock=stock, bank=bank, target=target, turn=seat,
                          drawn=False, out=out, captured=captured, idle=idle)  # fmt: skip
            return after, events
        else:
            seven = top[0] == SEVEN
    return end_turn(
        state, seat, taken, seven, events, deal_next,
        hands=hands, bank=bank, target=target, captured=captured, idle=idle, out=out,
    )  # fmt: skip


def take_bank(
    rules: Rules, bank: tuple[Entry, ...], captured: tuple[tuple[str, ...], ...], taker: int,
    why: str, idle: int, events: Events,
) -> tuple[tuple[tuple[str, ...], ...], Target | None, int]:
    """§8: `taker` captures the bank (event `capture`); the captured piles, the target
    after it (§8.3) and `idle` (0 under `free_lead`)."""
    cards = tuple(entry.card for entry in bank)
    captured = replaced(captured, taker, canonical((*captured[taker], *cards)))
    events.append({"type": "capture", "seat": taker, "cards": list(cards),
                   "points": points(cards), "why": why})  # fmt: skip
    if rules.after_capture == "free_lead":
        return captured, None, 0
    return captured, Target(cards[-1], None, True), idle


def end_turn(
    state: State, seat: int, taken: bool, seven: bool, events: Events, deal_next: bool, *,
    hands: tuple[tuple[str, ...], ...], bank: tuple[Entry, ...], target: Target | None,
    captured: tuple[tuple[str, ...], ...], idle: int, out: tuple[Out, ...],
) -> tuple[State, Events]:
    """§16 step 5 after `seat`'s move, which left `state` (as it was before the move) with
    the fields given: the end of the deal, a turn-up, the next holder and a seven's
    effect."""
    stock = state.stock
    holders = len(hands) - hands.count(())  # the seats still holding cards
    if holders <= 1 or (not stock and idle >= holders):
        played = moved(state, hands=hands, stock=stock, bank=bank, target=target, turn=seat,
                       drawn=False, out=out, captured=captured, idle=idle)  # fmt: skip
        return end_deal(played, "E1" if holders <= 1 else "E2", events, deal_next)
    rules = state.rules
    if taken and rules.after_capture == "turn_up" and stock:
        card, stock = stock[0], stock[1:]
        bank, target, idle = (Entry(card, None),), Target(card, None, False), 0
        events.append({"type": "turn_up", "card": card})
    turn = next_holder(hands, seat)
    drawn = False
    after_seven = rules.after_seven
    if seven and after_seven != "none":
        if after_seven in ("draw_then_play", "skip_and_draw") and stock:
            card, stock = stock[0], stock[1:]
            hands = replaced(hands, turn, canonical((*hands[turn], card)))
            drawn, idle = after_seven == "draw_then_play", 0
            events.append(draw_event(turn, card, True))
        if after_seven in ("skip", "skip_and_draw"):
            events.append({"type": "skip", "seat": turn})
            turn = next_holder(hands, turn)
    after = moved(state, hands=hands, stock=stock, bank=bank, target=target, turn=turn,
                  drawn=drawn, out=out, captured=captured, idle=idle)  # fmt: skip
    return after, events


def moved(
    state: State, *, hands: tuple[tuple[str, ...], ...], stock: tuple[str, ...],
    bank: tuple[Entry, ...], target: Target | None, turn: int, drawn: bool,
    out: tuple[Out, ...], captured: tuple[tuple[str, ...], ...], idle: int,
) -> State:
    """`state` with the fields a move changes within a deal given. Built whole rather than
    by `_replace`, which copies each of the 22 fields through a keyword dict (two of those
    took a third of a move in random playouts, bench.engine), and as the tuple it is:
    State's own __new__ is a Python function that takes every field by name only to call
    `tuple.__new__` (another tenth of a move)."""
    (rules, seats, dealer, common, personal, _, _, _, _, _, _, _, _, _, starter, scores, deal,
     status, winner, winners, tiebreak, seed) = state  # fmt: skip
    return tuple.__new__(State, (
        rules, seats, dealer, common, personal, hands, stock, bank, target, turn, drawn, out,
        captured, idle, starter, scores, deal, status, winner, winners, tiebreak, seed,
    ))  # fmt: skip


def end_deal(state: State, ending: str, events: Events, deal_next: bool) -> tuple[State, Events]:
    """§11.4: score and bank the deal, then end the match or deal the next one (without
    `deal_next`, leave nobody to move)."""
    loser = loser_of(state)
    assert loser is not None, "a deal in play ends with a seat holding cards"
    sides = breakdown(state, loser)
    scores = tuple(banked + side["total"] for banked, side in zip(state.scores, sides))
    events.append({
        "type": "deal_end", "deal": state.deal, "ending": ending, "loser": loser,
        "penalty": sides[loser]["penalty"], "sides": sides, "scores": list(scores),
        "discarded": [entry.card for entry in state.bank],
    })  # fmt: skip
    winners, tiebreak = match_result(state, scores)
    state = state._replace(scores=scores, tiebreak=tiebreak)
    if winners:
        winner = winners[0] if len(winners) == 1 else None
        events.append({"type": "match_end", "winner": winner, "winners": list(winners),
                       "scores": list(scores)})  # fmt: skip
        over = state._replace(status=MATCH_OVER, turn=None, drawn=False, winner=winner,
                              winners=winners)  # fmt: skip
        return over, events
    if not deal_next:
        return state._replace(turn=None), events
    dealer = next_dealer(state, loser)
    state = dealt(state, dealer, state.deal + 1, next_seed(state))
    events.append({"type": "deal", "deal": state.deal, "dealer": dealer,
                   "starter": state.starter, "card": state.bank[0].card})  # fmt: skip
    return state, events


def leaders(scores: tuple[int, ...], seats) -> tuple[int, ...]:
    """The seats among `seats` holding the highest score, ascending."""
    best = max(scores[seat] for seat in seats)
    return tuple(sorted(seat for seat in seats if scores[seat] == best))


def match_result(state: State, scores: tuple[int, ...]) -> tuple[tuple[int, ...], Tiebreak | None]:
    """§14: the winners (none while the match goes on) and the tie-break after the deal."""
    tiebreak = state.tiebreak
    if tiebreak is None:
        top = leaders(scores, range(state.seats))
        if scores[top[0]] >= state.rules.target_score:
            if len(top) == 1:
                return top, None
            tiebreak = Tiebreak(top, 0)
    else:
        extra = tiebreak.extra_deals + 1
        top = leaders(scores, tiebreak.eligible)
        if len(top) == 1:
            return top, tiebreak._replace(extra_deals=extra)
        tiebreak = Tiebreak(top, extra)
        if extra >= EXTRA_DEALS:
            return top, tiebreak
    if state.deal >= MAX_DEALS:
        return leaders(scores, tiebreak.eligible if tiebreak else range(state.seats)), tiebreak
    return (), tiebreak


def next_dealer(state: State, loser: int) -> int:
    """§13: the dealer of the next deal (`state` has the deal's scores banked)."""
    rule = state.rules.dealer_rule
    if rule == "loser":
        return loser
    if rule == "starter":
        return state.starter
    order = from_left(state.dealer, state.seats)
    if rule == "finisher":
        return state.out[0].seat if state.out else order[0]
    sign = 1 if rule == "max_points" else -1
    return max(order, key=lambda seat: (sign * state.scores[seat], -order.index(seat)))
