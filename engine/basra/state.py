"""The Basra state: an immutable value, its JSON form and its consistency check."""

from collections import Counter
from itertools import chain
from typing import Any, Final, NamedTuple

from engine import fields
from engine.basra.cards import DECK
from engine.basra.rules import DEALT, Rules
from engine.cards import sort_cards
from engine.errors import RulesError, StateError, shown

SIDES: Final = 2  # two seats, or two partnerships of four seats (spec §10)
PLAYING: Final = "playing"
MATCH_OVER: Final = "match_over"
# Every match ends by rule: after this many rounds the highest total wins (§9, round cap).
MAX_ROUNDS: Final = 200


class State(NamedTuple):
    rules: Rules
    seats: int
    dealer: int
    turn: int | None
    hands: tuple[tuple[str, ...], ...]
    table: tuple[str, ...]
    stock: tuple[str, ...]
    captured: tuple[tuple[str, ...], ...]
    basras: tuple[tuple[tuple[str, int], ...], ...]
    last_capturer: int | None
    scores: tuple[int, ...]
    carry: int
    round: int
    status: str
    winner: int | None
    seed: str | None

    def to_json(self) -> dict[str, Any]:
        data = {
            "game": "basra",
            "rules": self.rules.to_json(),
            "seats": self.seats,
            "dealer": self.dealer,
            "turn": self.turn,
            "hands": [sort_cards(hand) for hand in self.hands],
            "table": list(self.table),
            "stock": list(self.stock),
            "captured": [sort_cards(pile) for pile in self.captured],
            "basras": [[{"card": c, "points": p} for c, p in side] for side in self.basras],
            "last_capturer": self.last_capturer,
            "scores": list(self.scores),
            "carry": self.carry,
            "round": self.round,
            "status": self.status,
            "winner": self.winner,
        }
        if self.seed is not None:
            data["seed"] = self.seed
        return data

    @classmethod
    def from_json(cls, data: object) -> "State":
        """Read a state, rejecting anything inconsistent with a StateError naming the field."""
        return read_state(data)


def side_of(seat: int) -> int:
    return seat % SIDES


REQUIRED: Final = (
    "game", "rules", "seats", "dealer", "turn", "hands", "table", "stock", "captured",
    "basras", "last_capturer", "scores", "carry", "round", "status", "winner",
)  # fmt: skip
CARDS: Final = frozenset(DECK)


def read_state(data: object) -> State:
    data = fields.keys_of(data, REQUIRED, ("seed",), "basra")
    if data["game"] != "basra":
        raise StateError("game", f'must be "basra", not {shown(data["game"])}')
    try:
        rules = Rules.from_json(data["rules"])
        seats = data["seats"]
        rules.check_seats(seats)
    except RulesError as error:
        raise fields.under_rules(error) from error
    dealer = fields.seat(data["dealer"], seats, "dealer")
    turn = fields.seat(data["turn"], seats, "turn", nullable=True)
    # The cards of a form as the engine writes it are checked in one go; any other form's
    # are read field by field, each named where it is wrong.
    plain = plain_cards(data, seats)
    hands = plain[0] if plain else fields.card_lists(data["hands"], seats, "hands", CARDS, "seat")
    table = plain[1] if plain else card_list(data["table"], "table")
    stock = plain[2] if plain else card_list(data["stock"], "stock")
    captured = (
        plain[3] if plain else fields.card_lists(data["captured"], SIDES, "captured", CARDS, "side")
    )
    basras = read_basras(data["basras"])
    last_capturer = fields.seat(data["last_capturer"], seats, "last_capturer", nullable=True)
    scores = fields.integers(data["scores"], SIDES, "scores", "side", minimum=0)
    carry = count(data["carry"], "carry")
    number = fields.integer(data["round"], "round", minimum=1, maximum=MAX_ROUNDS)
    status = fields.one_value(data["status"], "status", (PLAYING, MATCH_OVER))
    winner = fields.seat(data["winner"], SIDES, "winner", nullable=True)
    seed = fields.seed(data.get("seed"), "seed")
    # Built as the tuple it is: State's own __new__ is a Python function taking every field
    # by name only to call tuple.__new__.
    state = tuple.__new__(
        State,
        (rules, seats, dealer, turn, hands, table, stock, captured, basras, last_capturer,
         scores, carry, number, status, winner, seed),
    )  # fmt: skip
    if plain is None:
        check_cards(state)
    check_deal(state)
    check_piles(state)
    check_outcome(state)
    return state


Cards = tuple[str, ...]


def plain_cards(
    data: dict, seats: int
) -> tuple[tuple[Cards, ...], Cards, Cards, tuple[Cards, ...]] | None:
    """Hands, table, stock and captured piles of a form as the engine writes it, its cards
    checked at once: a list per seat of hands, one per side of piles, and every card of the
    pack exactly once. None for any other form, which the careful readers then read and
    name what is wrong with."""
    hands, table, stock, captured = data["hands"], data["table"], data["stock"], data["captured"]
    if (
        type(hands) is list
        and type(captured) is list
        and len(hands) == seats
        and len(captured) == SIDES
        and fields.whole_pack([*hands, table, stock, *captured], CARDS)
    ):
        return tuple(map(tuple, hands)), tuple(table), tuple(stock), tuple(map(tuple, captured))
    return None


def count(value: object, path: str) -> int:
    return fields.integer(value, path, minimum=0)


def card_list(value: object, path: str) -> tuple[str, ...]:
    return fields.cards(value, path, CARDS)


# No basra on either side: most rounds, until the first one is made.
NO_BASRAS: Final[list[list]] = [[], []]


def read_basras(value: object) -> tuple[tuple[tuple[str, int], ...], ...]:
    if value == NO_BASRAS:
        return ((),) * SIDES
    if not isinstance(value, list) or len(value) != SIDES:
        raise StateError("basras", f"must be a list of {SIDES} lists, one per side")
    sides = []
    for side, records in enumerate(value):
        if not isinstance(records, list):
            raise StateError(f"basras.{side}", "must be a list of {card, points}")
        read = []
        for index, record in enumerate(records):
            path = f"basras.{side}.{index}"
            if not isinstance(record, dict) or set(record) != {"card", "points"}:
                raise StateError(path, "must be an object with exactly 'card' and 'points'")
            card = fields.card(record["card"], f"{path}.card", CARDS)
            read.append((card, count(record["points"], f"{path}.points")))
        sides.append(tuple(read))
    return tuple(sides)


def check_cards(state: State) -> None:
    """Every card of the pack exactly once."""
    places = [*state.hands, state.table, state.stock, *state.captured]
    every = [*chain.from_iterable(places)]
    if len(every) == len(DECK) and len(set(every)) == len(DECK):
        return  # as many distinct cards as the pack has, every one of them read as a card
    seen = Counter(card for place in places for card in place)
    twice = sort_cards(tuple(card for card, times in seen.items() if times > 1))
    if twice:
        raise StateError("state", f"card {twice[0]} appears more than once")
    missing = [card for card in DECK if card not in seen]
    if missing:
        raise StateError("state", f"cards missing from the 52: {' '.join(missing)}")


def check_deal(state: State) -> None:
    """Hand sizes, stock length and turn must fit the deal structure (spec §3, §4.6)."""
    hand_size, seats, dealer, turn = state.rules.hand_size, state.seats, state.dealer, state.turn
    per_deal = hand_size * seats
    sizes = list(map(len, state.hands))
    if max(sizes) > hand_size:
        seat = next(seat for seat, size in enumerate(sizes) if size > hand_size)
        raise StateError(f"hands.{seat}", f"holds {sizes[seat]} cards; a deal gives {hand_size}")
    if len(state.stock) % per_deal or len(state.stock) > DEALT - per_deal:
        raise StateError(
            "stock", f"{len(state.stock)} cards cannot remain after deals of {per_deal}"
        )
    if state.status == MATCH_OVER:
        for path, cards in (("hands", sum(sizes)), ("table", state.table), ("stock", state.stock)):
            if cards:
                raise StateError(path, "must be empty once the match is over")
        return
    if turn is None:
        raise StateError("turn", "must be a seat while the match is playing")
    if not any(sizes):
        if state.stock:
            raise StateError("hands", "empty hands with cards left in the stock")
        return
    # From the dealer's left round to the dealer, the seats before `turn` have played one
    # card more than the rest this deal.
    played = (turn - dealer - 1) % seats
    most = sizes[turn]
    in_order = sizes[dealer + 1 :] + sizes[: dealer + 1]
    if in_order != [most - 1] * played + [most] * (seats - played) or most < 1:
        raise StateError(
            "hands",
            f"hand sizes {', '.join(map(str, sizes))} do not fit dealer {dealer} and seat "
            f"{turn} to move with {hand_size} cards a deal",
        )


def check_piles(state: State) -> None:
    for side, records in enumerate(state.basras):
        for index, (card, _) in enumerate(records):
            if card not in state.captured[side]:
                raise StateError(
                    f"basras.{side}.{index}.card",
                    f"{card} made a basra but is not in side {side}'s pile",
                )
    if state.last_capturer is None:
        # A finished match may end on a round without any capture (forced_capture off):
        # its table went to the dealer's side (§7.3), not to a capturer.
        if any(state.captured) and state.status != MATCH_OVER:
            raise StateError("last_capturer", "must name a seat once cards were captured")
    elif not state.captured[side_of(state.last_capturer)]:
        raise StateError("last_capturer", "that seat's side has captured nothing")


def check_outcome(state: State) -> None:
    over = state.status == MATCH_OVER
    if over and state.turn is not None:
        raise StateError("turn", "must be null once the match is over")
    if over != (state.winner is not None):
        raise StateError("winner", "must be a side exactly when the match is over")
    if over:
        best = max(state.scores)
        leaders = [side for side, score in enumerate(state.scores) if score == best]
        if state.round == MAX_ROUNDS:
            if state.winner not in leaders:
                raise StateError("winner", "must be a side with the highest total at the cap")
        elif best < state.rules.target_score or leaders != [state.winner]:
            raise StateError("winner", "must be the one side strictly highest at the target")
