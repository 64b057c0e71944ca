"""Beating (spec §3), the legal moves of a turn (§6, §7) and reading a move's JSON form."""

from collections.abc import Mapping
from functools import cache
from typing import Any, Final, NamedTuple, cast

from engine import fields
from engine.bank.cards import (
    CARDS,
    DECK,
    EIGHT,
    GAME_ORDER,
    HEIGHT,
    QUADS,
    RANK,
    RUNS,
    RUNS_OF_SUIT,
    SUIT,
)
from engine.bank.state import PLAYING, State, Target
from engine.cards import RANKS, SUITS
from engine.errors import IllegalMove, NotAMove, shown
from engine.listing import LastListing

LAY: Final = "lay"
QUAD: Final = "quad"
RUN: Final = "run"
DRAW: Final = "draw"
PASS: Final = "pass"
TYPES: Final = (LAY, QUAD, RUN, DRAW, PASS)
CLASS_OF_SUIT: Final = {suit: index for index, suit in enumerate(SUITS)}


class Move(NamedTuple):
    """A move: `lay` one card, a `quad` or a `run` in laying order, `draw` or `pass`."""

    type: str
    cards: tuple[str, ...] = ()


def beats(card: str, target: str | None, common: tuple[int, ...], own_trump: str | None) -> bool:
    """Whether a seat whose personal trump is `own_trump` may lay `card` singly on `target`
    (None: a free lead): never an eight; else same rank, a lower card of the suit, or a
    trump — a higher common class, or the seat's own trump on another suit (§3)."""
    if RANK[card] == EIGHT:
        return False
    if target is None or RANK[card] == RANK[target]:
        return True
    suit, target_suit = SUIT[card], SUIT[target]
    if suit == target_suit:
        return HEIGHT[card] < HEIGHT[target]
    return common[CLASS_OF_SUIT[suit]] > common[CLASS_OF_SUIT[target_suit]] or suit == own_trump


# Kept whole, without an LRU's bookkeeping on every hit (2.4 % of a random playout): a read
# state's trumps are one of the five modes' few settings (check_trumps), so at most 37
# targets for each of 11 (common classes, own trump) pairs.
@cache
def beaters(target: str | None, common: tuple[int, ...], own_trump: str | None) -> frozenset[str]:
    """Every card that beats `target` for a seat, from `beats`; cached per trump setting."""
    return frozenset(card for card in DECK if beats(card, target, common, own_trump))


def is_trump_king(card: str, common: tuple[int, ...], own_trump: str | None) -> bool:
    """A king of a suit that is a trump for everybody, or of the seat's own trump (§2.4)."""
    suit = SUIT[card]
    return RANK[card] == "K" and (common[CLASS_OF_SUIT[suit]] >= 1 or suit == own_trump)


LAYS: Final[dict[str, Move]] = {card: Move(LAY, (card,)) for card in DECK}
# A quad once per choice of top card, the other three in canonical order before it.
QUAD_MOVES: Final[dict[str, tuple[Move, ...]]] = {
    rank: tuple(Move(QUAD, (*(other for other in cards if other != top), top)) for top in cards)
    for rank, cards in QUADS.items()
}
# A run from each end: low-first (the highest on top), then high-first.
RUN_MOVES: Final[dict[tuple[str, ...], tuple[Move, Move]]] = {
    run: (Move(RUN, run), Move(RUN, run[::-1])) for run in RUNS
}
RUN_ORDERS: Final = frozenset(
    cards for moves in RUN_MOVES.values() for cards in (m.cards for m in moves)
)
DRAW_MOVE: Final = Move(DRAW)
PASS_MOVE: Final = Move(PASS)


def beating_cards(state: State) -> frozenset[str]:
    """The cards that beat the target for the seat to move."""
    target, turn = state.target, state.turn
    assert turn is not None, "a seat is to move while the match is played"
    return beaters(None if target is None else target.card, state.common, state.personal[turn])


# A hand as a mask: nine bits a suit (C, D, H, S, from the lowest), a rank's bit at its place
# in the game order. Quads and runs are read off tables of a suit's nine bits, built once.
RANK_BIT: Final[dict[str, int]] = {rank: 1 << place for place, rank in enumerate(GAME_ORDER)}
BIT: Final[dict[str, int]] = {
    card: RANK_BIT[RANK[card]] << 9 * SUITS.index(SUIT[card]) for card in DECK
}


def held_plays(plays: list[tuple[int, tuple[Move, ...]]]) -> tuple[tuple[Move, ...], ...]:
    """For each of the 512 sets of ranks, the moves of every play (the rank bits it needs,
    its moves) whose ranks the set holds, in the order given."""
    return tuple(
        tuple(move for needed, moves in plays if field & needed == needed for move in moves)
        for field in range(512)
    )


# The quads by the ranks held in all four suits, in canonical rank order (A, 6, ..., K: the
# order a canonical hand first shows them in); each suit's runs by the ranks held in it.
QUADS_HELD: Final = held_plays(
    [(RANK_BIT[rank], QUAD_MOVES[rank]) for rank in sorted(QUAD_MOVES, key=RANKS.index)]
)
RUNS_HELD: Final = tuple(  # suit by suit, in BIT's order of the suits' nine bits
    held_plays(
        [(sum(RANK_BIT[RANK[card]] for card in run), RUN_MOVES[run]) for run in RUNS_OF_SUIT[suit]]
    )
    for suit in SUITS
)


def free_plays(hand: tuple[str, ...]) -> tuple[Move, ...]:
    """The quads and runs a hand in canonical order holds (eights are listed with the
    lays): quads, then each suit's runs, suits in order. Read off tables by the hand's mask
    rather than counted card by card: a hand is a new one on most turns of a playout."""
    held = sum(map(BIT.__getitem__, hand))
    clubs, diamonds, hearts, spades = held & 511, held >> 9 & 511, held >> 18 & 511, held >> 27
    return (
        QUADS_HELD[clubs & diamonds & hearts & spades]
        + RUNS_HELD[0][clubs]
        + RUNS_HELD[1][diamonds]
        + RUNS_HELD[2][hearts]
        + RUNS_HELD[3][spades]
    )


# Listing then applying a listed move trusts it instead of listing again.
LISTED: Final = LastListing()


def legal_moves(state: State) -> list[Move]:
    """Every legal move of the seat to move, each once: lays (beats and eights) in the
    hand's canonical order, then quads, runs, and `draw` or `pass` when nothing beats."""
    if state.status != PLAYING:
        return []
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    hand = state.hands[turn]
    beating = beating_cards(state)
    moves = []
    can_beat = False
    for card in hand:
        if card in beating:
            can_beat = True
            moves.append(LAYS[card])
        elif RANK[card] == EIGHT:
            moves.append(LAYS[card])
    if len(hand) >= 4:
        moves.extend(free_plays(hand))
    if not can_beat:
        moves.append(DRAW_MOVE if state.stock and not state.drawn else PASS_MOVE)
    LISTED.entry = (state, tuple(moves))  # a Python call less per listing than a method
    return moves


def read_move(state: State, data: object) -> Move:
    """`named_move`'s move, left in LISTED as listed for `state`: applied there, it is
    trusted rather than read again."""
    return LISTED.read(state, named_move(state, data))


def named_move(state: State, data: object) -> Move:
    """The legal move `data` names: a Move or its JSON form (card input in any accepted
    form; a quad's four cards in any order, the last on top; a run in one of its two
    laying orders).

    :raises NotAMove: the JSON names no move (no type, not a card, not four cards...).
    :raises IllegalMove: a move, but not legal here; both name the field (`move`,
        `move.type`, `move.card`, `move.cards.2`) and say why.
    """
    if state.status != PLAYING:
        raise IllegalMove("move", "the match is over; no move can be made")
    if isinstance(data, Move):
        if data in legal_moves(state):
            return data
        data = write_move(data)
    if not isinstance(data, Mapping):
        raise NotAMove("move", "must be an object with a type")
    kind = data.get("type")
    if kind not in TYPES:
        raise NotAMove("move.type", f"must be one of {', '.join(TYPES)}, got {shown(kind)}")
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    hand = state.hands[turn]
    if kind == LAY:
        return read_lay(state, hand, data)
    if kind in (QUAD, RUN):
        return read_free_play(kind, hand, data)
    return read_draw_or_pass(state, kind)


def card_in(text: object, path: str) -> str:
    return fields.card(text, path, CARDS, NotAMove)


def read_lay(state: State, hand: tuple[str, ...], data: Mapping[str, Any]) -> Move:
    if "card" not in data:
        raise NotAMove("move.card", "is required for a lay")
    card = card_in(data["card"], "move.card")
    if card not in hand:
        raise IllegalMove("move.card", f"{card} is not in the hand of seat {state.turn}")
    if RANK[card] != EIGHT and card not in beating_cards(state):
        target = cast(Target, state.target)  # a card that does not beat has a target above it
        raise IllegalMove(
            "move.card",
            f"{card} does not beat the target {target.card}: a card beats by the same "
            "rank, as a lower card of the same suit, or as a trump",
        )
    return LAYS[card]


def read_free_play(kind: str, hand: tuple[str, ...], data: Mapping[str, Any]) -> Move:
    cards = data.get("cards")
    if not isinstance(cards, list) or len(cards) != 4:
        raise NotAMove("move.cards", f"a {kind} must list exactly four cards")
    read: list[str] = []
    for index, text in enumerate(cards):
        path = f"move.cards.{index}"
        card = card_in(text, path)
        if card in read:
            raise NotAMove(path, f"{card} is listed twice")
        if card not in hand:
            raise IllegalMove(path, f"{card} is not in the hand")
        read.append(card)
    if kind == QUAD and len({RANK[card] for card in read}) != 1:
        raise NotAMove("move.cards", "a quad is the four cards of one rank")
    if kind == RUN and tuple(read) not in RUN_ORDERS:
        raise NotAMove(
            "move.cards",
            "a run is four consecutive cards of one suit in the game order 6 7 8 9 J Q K T A, "
            "listed from either end",
        )
    return Move(kind, tuple(read))


def read_draw_or_pass(state: State, kind: str) -> Move:
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    beating = [card for card in state.hands[turn] if card in beating_cards(state)]
    if beating:
        raise IllegalMove(
            "move.type",
            f"cannot {kind} while holding a card that beats the target: {' '.join(beating)}",
        )
    if kind == DRAW:
        if not state.stock:
            raise IllegalMove("move.type", "cannot draw: the stock is empty; pass instead")
        if state.drawn:
            raise IllegalMove("move.type", "cannot draw twice against one target; pass instead")
        return DRAW_MOVE
    if state.stock and not state.drawn:
        raise IllegalMove("move.type", "cannot pass before drawing from the stock")
    return PASS_MOVE


def write_move(move: Move) -> dict[str, Any]:
    """A move's JSON form."""
    if move.type == LAY:
        return {"type": LAY, "card": move.cards[0]}
    if move.type in (QUAD, RUN):
        return {"type": move.type, "cards": list(move.cards)}
    return {"type": move.type}
