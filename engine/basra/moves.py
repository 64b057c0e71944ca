"""Legal moves: what each card in hand may capture (spec §4-§6), and reading and writing
a move's JSON form."""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any, Final, NamedTuple

from engine.basra import covers
from engine.basra.cards import DECK, SEVEN_OF_DIAMONDS, VALUE
from engine.basra.rules import Rules
from engine.basra.scoring import card_points
from engine.basra.state import PLAYING, State
from engine.cards import CardError, canonical, parse_card, sort_cards
from engine.errors import AmbiguousMove, IllegalMove, NotAMove, TooLarge
from engine.listing import LastListing


class Move(NamedTuple):
    card: str
    capture: tuple[str, ...]  # canonical order; () lays the card on the table
    basra: bool = False
    basra_points: int = 0


# A Move made in C from its four fields: NamedTuple's own __new__ is a Python function that
# takes each field by name only to call this (a listing makes a move for every capture).
new_move: Final = partial(tuple.__new__, Move)


def sweeps(card: str, rules: Rules) -> bool:
    """Jacks, and the seven of diamonds unless it is plain, take the whole table."""
    return card[0] == "J" or (card == SEVEN_OF_DIAMONDS and rules.seven_diamonds_mode != "plain")


def takes_lone_wild_seven(card: str, table: tuple[str, ...], rules: Rules) -> bool:
    """A lone seven of diamonds under `lone_wild` falls to any card but a jack (§5.5)."""
    lone = rules.table_seven_diamonds == "lone_wild" and table == (SEVEN_OF_DIAMONDS,)
    return lone and card[0] != "J"


def is_lone_jack(table: tuple[str, ...], rules: Rules) -> bool:
    return rules.jack_basra_points > 0 and len(table) == 1 and table[0][0] == "J"


def all_numerals(table: tuple[str, ...]) -> bool:
    return all(VALUE[card] for card in table)


def clears_as_some_rank(table: tuple[str, ...]) -> bool:
    """The wild seven of diamonds: could some rank A..T, Q or K have taken the whole table?"""
    if all(card[0] == "Q" for card in table) or all(card[0] == "K" for card in table):
        return True
    if not all_numerals(table):
        return False
    vector = sum(covers.unit(VALUE[card]) for card in table)
    return covers.splits_evenly(vector, sum(VALUE[card] for card in table))


def basra_points(
    card: str, table: tuple[str, ...], capture: tuple[str, ...], rules: Rules
) -> int | None:
    """The points of the basra a capture makes, None when it makes none (spec §6)."""
    if takes_lone_wild_seven(card, table, rules):
        return rules.basra_points
    if card[0] == "J":
        return rules.jack_basra_points if is_lone_jack(table, rules) else None
    if sweeps(card, rules):
        if rules.seven_diamonds_mode == "sweep":
            total = sum(VALUE[other] for other in table)
            small = all_numerals(table) and total <= rules.seven_diamonds_basra_max_sum
            return rules.basra_points if small else None
        if is_lone_jack(table, rules):
            return rules.jack_basra_points
        return rules.basra_points if clears_as_some_rank(table) else None
    return rules.basra_points if len(capture) == len(table) else None


def make_move(
    card: str, capture: tuple[str, ...], table: tuple[str, ...], rules: Rules, final: bool
) -> Move:
    points = basra_points(card, table, capture, rules) if capture else None
    if points is None:
        return new_move((card, capture, False, 0))
    counts = not final or rules.last_card_basra_counts
    return new_move((card, capture, True, points if counts else 0))


def card_moves(card: str, table: tuple[str, ...], rules: Rules, final: bool) -> list[Move]:
    """Every legal move of one card; `final` when it is the last card of the round."""
    moves = [
        make_move(card, capture, table, rules, final) for capture in captures(card, table, rules)
    ]
    if not moves or not rules.forced_capture:
        moves.append(LAYS[card])
    return moves


# Each card laid on the table without taking anything, made once: most cards of a listing
# are laid, and a listing is made for every move.
LAYS: Final[dict[str, Move]] = {card: Move(card, ()) for card in DECK}


def hand_moves(
    hand: tuple[str, ...], table: tuple[str, ...], rules: Rules, final: bool
) -> list[Move]:
    """`card_moves` of every card in hand, in turn. The common cases (a numeral taking by
    sum, a queen or king taking its rank, a jack sweeping) are decided here, with the
    table's rules looked up once for the whole hand; the seven of diamonds and a lone wild
    seven on the table go through `card_moves`."""
    if not table:
        return [LAYS[card] for card in hand]
    lone_seven = rules.table_seven_diamonds == "lone_wild" and table == (SEVEN_OF_DIAMONDS,)
    counts = not final or rules.last_card_basra_counts
    points = rules.basra_points if counts else 0
    forced, policy, cleared = rules.forced_capture, rules.capture_policy, len(table)
    held = sum(map(BIT_OF, table))  # bits_of(table), one Python call less
    moves: list[Move] = []
    for card in hand:
        if lone_seven or card == SEVEN_OF_DIAMONDS:
            moves += card_moves(card, table, rules, final)
            continue
        value = VALUE[card]
        if value:
            joining = JOINABLE[value] & held
            # No numeral of its value or below on the table: nothing to search for.
            found = search_captures(value, joining, policy) if joining else ()
        elif card[0] == "J":
            # A jack sweeps the table; a basra only on a lone jack when jacks score one.
            swept = canonical(table)
            if is_lone_jack(table, rules):
                jack_points = rules.jack_basra_points if counts else 0
                moves.append(new_move((card, swept, True, jack_points)))
            else:
                moves.append(new_move((card, swept, False, 0)))
            if not forced:
                moves.append(LAYS[card])
            continue
        else:
            same = [other for other in table if other[0] == card[0]]
            found = (canonical(same),) if same else ()
        if not found:
            moves.append(LAYS[card])
            continue
        # Taking by sum or by rank makes a basra exactly when it clears the table (§6).
        for capture in found:
            if len(capture) == cleared:
                moves.append(new_move((card, capture, True, points)))
            else:
                moves.append(new_move((card, capture, False, 0)))
        if not forced:
            moves.append(LAYS[card])
    return moves


def is_legal(card: str, capture: tuple[str, ...], table: tuple[str, ...], rules: Rules) -> bool:
    """Whether the card may take `capture` (canonical order), without listing every
    alternative: under `any_family` the list can run to millions."""
    if not capture:
        return not rules.forced_capture or not can_capture(card, table, rules)
    if takes_by_sum(card, table, rules) and rules.capture_policy == "any_family":
        in_table = set(capture) <= set(table) and all(VALUE[other] for other in capture)
        vector = sum(covers.unit(VALUE[other]) for other in capture)
        return in_table and covers.splits_into(vector, VALUE[card])
    return capture in captures(card, table, rules)


def can_capture(card: str, table: tuple[str, ...], rules: Rules) -> bool:
    if takes_by_sum(card, table, rules):
        return bool(sum_captures(VALUE[card], table, "max_cards"))
    return bool(captures(card, table, rules))


def takes_by_sum(card: str, table: tuple[str, ...], rules: Rules) -> bool:
    """A numeral on a table where no special rule (§5.3-§5.5) decides its capture."""
    return (
        bool(table)
        and VALUE[card] > 0
        and not takes_lone_wild_seven(card, table, rules)
        and not sweeps(card, rules)
    )


def captures(card: str, table: tuple[str, ...], rules: Rules) -> list[tuple[str, ...]]:
    """Every capture set the card may take (canonical order), [] when it takes nothing."""
    if not table:
        return []
    if takes_lone_wild_seven(card, table, rules):
        return [table]
    if sweeps(card, rules):
        return [canonical(table)]
    if VALUE[card] == 0:
        same = [other for other in table if other[0] == card[0]]
        return [canonical(same)] if same else []
    return list(sum_captures(VALUE[card], table, rules.capture_policy))


# Under `any_family` a card may take any cover, up to 2**n of them for n candidate table
# cards; past this many candidates a listing would run to megabytes, so it is refused.
ANY_FAMILY_CANDIDATES: Final = 14


class TooManyMoves(TooLarge):
    """Listing every legal move would be unreasonably large (house rule `any_family`)."""


# Each card's bit in a set of cards held as an int, in canonical order (the first card is
# the lowest bit): a table's cards are one sum, the numerals a card can join one `&`, and
# an int is a far cheaper cache key than a frozenset made for every card of every listing.
BIT: Final[dict[str, int]] = {card: 1 << index for index, card in enumerate(DECK)}
BIT_OF: Final = BIT.__getitem__  # bound once, as engine.cards.PLACE
# The card of each bit, by the bit's length (1 for the first card).
CARD_OF_LENGTH: Final[dict[int, str]] = {bit.bit_length(): card for card, bit in BIT.items()}


def bits_of(cards: Iterable[str]) -> int:
    """The set of `cards` (no card twice) as an int of BIT."""
    return sum(map(BIT_OF, cards))


def cards_of(bits: int) -> list[str]:
    """The cards of a set of BIT, in canonical order."""
    cards = []
    while bits:
        lowest = bits & -bits
        cards.append(CARD_OF_LENGTH[lowest.bit_length()])
        bits ^= lowest
    return cards


# The table numerals a numeral of each value can take part of: ace up to its own value.
JOINABLE: Final[dict[int, int]] = {
    value: bits_of(card for card, other in VALUE.items() if 0 < other <= value)
    for value in range(1, 11)
}


def sum_captures(value: int, table: tuple[str, ...], policy: str) -> tuple[tuple[str, ...], ...]:
    """Every capture by sum of a numeral of `value` on `table` (canonical order)."""
    return search_captures(value, JOINABLE[value] & bits_of(table), policy)


# Each numeral's whole count field in a count vector (engine/basra/covers.py): a cover uses
# a card's value where its field is not zero.
FIELD: Final[dict[str, int]] = {card: covers.field(value) for card, value in VALUE.items() if value}

# BIT holds each suit's cards in a row of SUIT_SPAN bits, its numerals (ace to ten) the
# lowest ten: the count vector of any set of numerals is one lookup per suit in SUIT_VECTOR,
# by that suit's numeral bits, instead of a walk over its cards.
SUIT_SPAN, SUIT_NUMERALS = 13, (1 << 10) - 1
assert all(
    VALUE[card] == index % SUIT_SPAN + 1
    for index, card in enumerate(DECK)
    if index % SUIT_SPAN < 10
), "each suit's numerals lead its row of BIT, ace to ten"
SUIT_VECTOR: Final[tuple[int, ...]] = tuple(
    sum(covers.unit(rank + 1) for rank in range(10) if numerals >> rank & 1)
    for numerals in range(SUIT_NUMERALS + 1)
)


def count_vector(numerals: int) -> int:
    """The count vector of a set of numerals (BIT)."""
    return (
        SUIT_VECTOR[numerals & SUIT_NUMERALS]
        + SUIT_VECTOR[numerals >> SUIT_SPAN & SUIT_NUMERALS]
        + SUIT_VECTOR[numerals >> 2 * SUIT_SPAN & SUIT_NUMERALS]
        + SUIT_VECTOR[numerals >> 3 * SUIT_SPAN]
    )


# search_captures' results of each capture policy, by the set of candidates and the value
# (`joining << 4 | value`, one int: its hash is itself, where a key of three arguments is a
# tuple hashed and compared field by field). Emptied when full rather than kept in recency
# order: a state posted to the service can hold any table, and a hit then costs one lookup.
SEARCHED: Final[dict[str, dict[int, tuple[tuple[str, ...], ...]]]] = {
    "max_cards": {},
    "any_family": {},
}
SEARCHES_KEPT: Final = 1 << 16


def search_captures(value: int, joining: int, policy: str) -> tuple[tuple[str, ...], ...]:
    """`sum_captures` over the set of table numerals that can join a capture (BIT). Kept
    for that set alone: faces, higher cards and the order of play do not change what a card
    can take, and listing then applying a move asks for the same search. A set missed here
    (about one search in nine over seconds of playouts) is searched by its count vector, a far
    smaller space that `vector_captures` keeps whole."""
    searched = SEARCHED[policy]
    key = joining << 4 | value
    found = searched.get(key)
    if found is None:
        if len(searched) >= SEARCHES_KEPT:
            searched.clear()
        found = searched[key] = search_by_vector(value, joining, policy)
    return found


def search_by_vector(value: int, joining: int, policy: str) -> tuple[tuple[str, ...], ...]:
    """`search_captures` without its memory."""
    if policy == "any_family" and joining.bit_count() > ANY_FAMILY_CANDIDATES:
        raise TooManyMoves(
            "table",
            f"capture_policy any_family: {joining.bit_count()} table cards could join a "
            f"capture by {value}, too many legal moves to list (at most "
            f"{ANY_FAMILY_CANDIDATES}); apply a move naming its capture instead",
        )
    found, whole = vector_captures(value, count_vector(joining), policy)
    if whole:
        # The commonest capture: every candidate of each value it uses, so it expands one
        # way only, to exactly those cards.
        return (tuple(cards_of(joining & whole)),)
    if not found:
        return ()
    by_value: dict[int, list[str]] = {}
    for other in cards_of(joining):
        by_value.setdefault(VALUE[other], []).append(other)
    return tuple(
        sorted(canonical(cards) for used in found for cards in covers.expand(used, by_value))
    )


# Bounded like search_captures: a state posted to the service can hold any table.
@lru_cache(maxsize=1 << 16)
def vector_captures(value: int, vector: int, policy: str) -> tuple[tuple[int, ...], int]:
    """The used-count vectors of every capture by sum of a numeral of `value` from the
    table numerals counted by `vector`; and when that is one capture taking every card of
    each value it uses, the BIT of every card of those values (0 otherwise)."""
    if policy == "max_cards":
        lower = vector & (covers.unit(value) - 1)
        found = [used + (vector - lower) for used in covers.largest_covers(value, lower)[1]]
    else:
        found = list(covers.every_cover(value, vector))
    found = [used for used in found if used]
    if len(found) == 1 and covers.takes_whole(found[0], vector):
        return tuple(found), bits_of(card for card, bits in FIELD.items() if bits & found[0])
    return tuple(found), 0


def clear_caches() -> None:
    """Forget every cached capture search (benchmarks time the search from cold)."""
    covers.largest_covers.cache_clear()
    covers.every_cover.cache_clear()
    vector_captures.cache_clear()
    for searched in SEARCHED.values():
        searched.clear()


def is_final_card(state: State) -> bool:
    """Whether the card about to be played is the last of the round."""
    return not state.stock and sum(map(len, state.hands)) == 1


def playable_moves(state: State) -> list[Move]:
    """Some legal moves where `legal_moves` refuses to list them all (any_family on a
    crowded table), for the computer players (engine.bots `moves_to_choose`): each card's
    captures of most cards and its lay, those the table's real rules allow."""
    if state.status != PLAYING:
        return []
    rules = state.rules
    final = not rules.last_card_basra_counts and is_final_card(state)
    most = replace(rules, capture_policy="max_cards")
    table = state.table
    assert state.turn is not None, "a seat is to move while the match is played"
    return [
        make_move(card, option.capture, table, rules, final)
        for card in state.hands[state.turn]
        for option in card_moves(card, table, most, final)
        if is_legal(card, option.capture, table, rules)
    ]


# Listing then applying a listed move trusts it instead of reading it again (play.apply).
LISTED: Final = LastListing()


def legal_moves(state: State) -> list[Move]:
    if state.status != PLAYING:
        return []
    rules = state.rules
    # Whether this is the round's last card changes a listing only when its basra scores none.
    final = not rules.last_card_basra_counts and is_final_card(state)
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    moves = hand_moves(state.hands[turn], state.table, rules, final)
    LISTED.entry = (state, tuple(moves))  # LISTED.remember's, a Python call less per listing
    return moves


def read_move(state: State, move: object) -> Move:
    """`named_move`'s move, left in LISTED as listed for `state`: applied there, it is
    trusted rather than read again."""
    return LISTED.read(state, named_move(state, move))


def named_move(state: State, move: object) -> Move:
    """The legal move that `move` (a Move or its JSON form) names: a card from the mover's
    hand and, unless the card has one outcome only, its capture."""
    if state.status != PLAYING:
        raise IllegalMove("move", "the match is over")
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    hand = state.hands[turn]
    if not hand:
        raise IllegalMove("move", "the round is played out; there is no card to play")
    card: object
    capture: tuple[str, ...] | None
    if isinstance(move, Move):
        card, capture = move.card, move.capture
    elif isinstance(move, Mapping):
        card, named = move.get("card"), move.get("capture")
        capture = None if named is None else read_capture(named)
    else:
        raise NotAMove("move", "must be an object with 'card' and 'capture'")
    try:
        card = parse_card(card)
    except CardError as error:
        raise NotAMove("move.card", str(error)) from error
    if card not in hand:
        raise IllegalMove("move.card", f"card not in hand: {card}", choices=sort_cards(hand))
    final = is_final_card(state)
    if capture is None:
        options = card_moves(card, state.table, state.rules, final)
        if len(options) == 1:
            return options[0]
        captures = captures_of(options)
        raise AmbiguousMove(
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
        raise IllegalMove("move.capture", reason) from None
    raise IllegalMove(
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
        raise NotAMove("move.capture", "must be a list of table cards")
    cards = []
    for index, text in enumerate(capture):
        try:
            cards.append(parse_card(text))
        except CardError as error:
            raise NotAMove(f"move.capture.{index}", str(error)) from error
    if len(set(cards)) != len(cards):
        raise NotAMove("move.capture", "names a card more than once")
    return canonical(cards)


def write_move(state: State, move: Move) -> dict[str, Any]:
    """A move's JSON form with what it earns at once: its basra points, plus the card
    points of the cards it takes when card points are on."""
    taken = (*move.capture, move.card) if move.capture else ()
    points = move.basra_points + (card_points(taken) if state.rules.card_points else 0)
    return {"card": move.card, "capture": list(move.capture), "basra": move.basra,
            "basra_points": move.basra_points, "points": points}  # fmt: skip
