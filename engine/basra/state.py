"""The Basra state: an immutable value, its JSON form and its consistency check."""

from collections import Counter
from typing import Any, NamedTuple

from engine.basra.cards import DECK
from engine.basra.rules import DEALT, Rules, RulesError
from engine.cards import CardError, parse_card, sort_cards
from engine.errors import GameError, shown

SIDES = 2  # two seats, or two partnerships of four seats (spec §10)
PLAYING, MATCH_OVER = "playing", "match_over"
# Every match ends by rule: after this many rounds the highest total wins (§9, round cap).
MAX_ROUNDS = 200


class StateError(GameError):
    """A state that is not self-consistent; `path` names the offending field."""


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


REQUIRED = (
    "game", "rules", "seats", "dealer", "turn", "hands", "table", "stock", "captured",
    "basras", "last_capturer", "scores", "carry", "round", "status", "winner",
)  # fmt: skip
REQUIRED_KEYS = frozenset(REQUIRED)
CARDS = frozenset(DECK)


def read_state(data: object) -> State:
    if not isinstance(data, dict):
        raise StateError("state", "must be an object")
    if not data.keys() >= REQUIRED_KEYS:
        missing = [key for key in REQUIRED if key not in data]
        raise StateError(missing[0], "required")
    if len(data) != len(REQUIRED) + ("seed" in data):
        unknown = sorted(set(data) - set(REQUIRED) - {"seed"})
        raise StateError(unknown[0], "unknown key")
    if data["game"] != "basra":
        raise StateError("game", f'must be "basra", not {shown(data["game"])}')
    try:
        rules = Rules.from_json(data["rules"])
    except RulesError as error:
        path = "rules" if error.path == "rules" else f"rules.{error.path}"
        raise StateError(path, error.reason, error.choices) from error
    seats = data["seats"]
    try:
        rules.check_seats(seats)
    except RulesError as error:
        path = error.path if error.path == "seats" else f"rules.{error.path}"
        raise StateError(path, error.reason, error.choices) from error
    status = data["status"]
    if status not in (PLAYING, MATCH_OVER):
        raise StateError("status", f'must be "playing" or "match_over", not {shown(status)}')
    seed = data.get("seed")
    if seed is not None and not isinstance(seed, str):
        raise StateError("seed", "must be a string")
    state = State(
        rules=rules,
        seats=seats,
        dealer=seat_index(data["dealer"], seats, "dealer"),
        turn=seat_index(data["turn"], seats, "turn", nullable=True),
        hands=card_lists(data["hands"], seats, "hands"),
        table=card_list(data["table"], "table"),
        stock=card_list(data["stock"], "stock"),
        captured=card_lists(data["captured"], SIDES, "captured"),
        basras=read_basras(data["basras"]),
        last_capturer=seat_index(data["last_capturer"], seats, "last_capturer", nullable=True),
        scores=tuple(counts(data["scores"], "scores")),
        carry=count(data["carry"], "carry"),
        round=count(data["round"], "round", minimum=1, maximum=MAX_ROUNDS),
        status=status,
        winner=seat_index(data["winner"], SIDES, "winner", nullable=True),
        seed=seed,
    )
    check_cards(state)
    check_deal(state)
    check_piles(state)
    check_outcome(state)
    return state


def count(value: object, path: str, minimum: int = 0, maximum: int | None = None) -> int:
    if type(value) is not int or value < minimum:
        raise StateError(path, f"must be an integer >= {minimum}, not {shown(value)}")
    if maximum is not None and value > maximum:
        raise StateError(path, f"must be an integer <= {maximum}, not {shown(value)}")
    return value


def counts(value: object, path: str) -> list[int]:
    if not isinstance(value, list) or len(value) != SIDES:
        raise StateError(path, f"must be a list of {SIDES} integers, one per side")
    return [count(item, f"{path}.{index}") for index, item in enumerate(value)]


def seat_index(value: object, limit: int, path: str, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if type(value) is not int or not 0 <= value < limit:
        raise StateError(path, f"must be an index below {limit}, not {shown(value)}")
    return value


def card_list(value: object, path: str) -> tuple[str, ...]:
    if type(value) is list:
        try:
            if CARDS.issuperset(value):
                return tuple(value)  # every card already in its canonical form
        except TypeError:
            pass  # something unhashable: the careful reading below names it
    if not isinstance(value, list):
        raise StateError(path, "must be a list of cards")
    cards = []
    for index, text in enumerate(value):
        try:
            cards.append(parse_card(text))
        except CardError as error:
            raise StateError(f"{path}.{index}", str(error)) from error
    return tuple(cards)


def card_lists(value: object, size: int, path: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or len(value) != size:
        raise StateError(path, f"must be a list of {size} card lists")
    return tuple(card_list(item, f"{path}.{index}") for index, item in enumerate(value))


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
            try:
                card = parse_card(record["card"])
            except CardError as error:
                raise StateError(f"{path}.card", str(error)) from error
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
