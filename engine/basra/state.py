"""The Basra state: an immutable value, its JSON form and its consistency check."""

from collections import Counter
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
    data = fields.keys_of(data, REQUIRED, ("seed",))
    if data["game"] != "basra":
        raise StateError("game", f'must be "basra", not {shown(data["game"])}')
    try:
        rules = Rules.from_json(data["rules"])
        seats = data["seats"]
        rules.check_seats(seats)
    except RulesError as error:
        raise fields.under_rules(error) from error
    state = State(
        rules=rules,
        seats=seats,
        dealer=fields.seat(data["dealer"], seats, "dealer"),
        turn=fields.seat(data["turn"], seats, "turn", nullable=True),
        hands=fields.listed(data["hands"], seats, "hands", card_list, "seat"),
        table=card_list(data["table"], "table"),
        stock=card_list(data["stock"], "stock"),
        captured=fields.listed(data["captured"], SIDES, "captured", card_list, "side"),
        basras=read_basras(data["basras"]),
        last_capturer=fields.seat(data["last_capturer"], seats, "last_capturer", nullable=True),
        scores=fields.listed(data["scores"], SIDES, "scores", count, "side"),
        carry=count(data["carry"], "carry"),
        round=fields.integer(data["round"], "round", minimum=1, maximum=MAX_ROUNDS),
        status=fields.one_value(data["status"], "status", (PLAYING, MATCH_OVER)),
        winner=fields.seat(data["winner"], SIDES, "winner", nullable=True),
        seed=fields.seed(data.get("seed"), "seed"),
    )
    check_cards(state)
    check_deal(state)
    check_piles(state)
    check_outcome(state)
    return state


def count(value: object, path: str) -> int:
    return fields.integer(value, path, minimum=0)


def card_list(value: object, path: str) -> tuple[str, ...]:
    return fields.cards(value, path, CARDS)


def read_basras(value: object) -> tuple[tuple[tuple[str, int], ...], ...]:
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
    every = sum(places, ())
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
    per_deal = state.rules.hand_size * state.seats
    for seat, hand in enumerate(state.hands):
        if len(hand) > state.rules.hand_size:
            raise StateError(
                f"hands.{seat}",
                f"holds {len(hand)} cards; a deal gives {state.rules.hand_size}",
            )
    if len(state.stock) % per_deal or len(state.stock) > DEALT - per_deal:
        raise StateError(
            "stock", f"{len(state.stock)} cards cannot remain after deals of {per_deal}"
        )
    if state.status == MATCH_OVER:
        for path, cards in (
            ("hands", sum(state.hands, ())),
            ("table", state.table),
            ("stock", state.stock),
        ):
            if cards:
                raise StateError(path, "must be empty once the match is over")
        return
    if state.turn is None:
        raise StateError("turn", "must be a seat while the match is playing")
    in_hand = sum(map(len, state.hands))
    if in_hand == 0:
        if state.stock:
            raise StateError("hands", "empty hands with cards left in the stock")
        return
    order = [(state.dealer + 1 + offset) % state.seats for offset in range(state.seats)]
    played = order.index(state.turn)
    most = len(state.hands[state.turn])
    expected = [most - 1] * played + [most] * (state.seats - played)
    actual = [len(state.hands[seat]) for seat in order]
    if actual != expected or not 1 <= most <= state.rules.hand_size:
        raise StateError(
            "hands",
            f"hand sizes {', '.join(str(len(hand)) for hand in state.hands)} do not fit dealer "
            f"{state.dealer} and seat {state.turn} to move with {state.rules.hand_size} "
            f"cards a deal",
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
