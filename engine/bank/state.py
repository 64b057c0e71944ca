"""The Bank state: an immutable value, its JSON form and its consistency check (the
contract's list, rule by rule)."""

from collections.abc import Iterator
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, Final, NamedTuple

from engine import fields
from engine.bank.cards import CARDS, DECK
from engine.bank.rules import Rules, check_seats
from engine.cards import SUITS, canonical
from engine.errors import RulesError, StateError, shown

PLAYING: Final = "playing"
MATCH_OVER: Final = "match_over"
MAX_DEALS: Final = 200
EXTRA_DEALS: Final = 5
# The finishing bonus by finish type and place (1st, 2nd, 3rd), spec §12.1.
BONUS: Final[dict[str, tuple[int, int, int]]] = {
    "plain": (20, 10, 10),
    "king": (30, 20, 10),
    "trump_king": (30, 20, 10),
    "four_kings": (30, 20, 10),
    "run": (30, 25, 20),
    "quad": (75, 75, 75),
}
# Each suit's class for everybody (C, D, H, S) under each trump mode; `single` is drawn.
COMMON: Final[dict[str, tuple[int, int, int, int]]] = {
    "per_player": (0, 0, 0, 0),
    "none": (0, 0, 0, 0),
    "double": (0, 1, 0, 1),
    "senior_junior": (0, 1, 0, 2),
}


class Entry(NamedTuple):
    """A card of the bank and the seat that laid it (None: a pack card)."""

    card: str
    by: int | None


class Target(NamedTuple):
    """The card to answer; `virtual` when it is the top card of a bank just taken."""

    card: str
    by: int | None
    virtual: bool


class Out(NamedTuple):
    """A seat out of the deal, its place, how it went out and its bonus."""

    seat: int
    place: int
    finish: str
    bonus: int


class Tiebreak(NamedTuple):
    """The tied leaders still able to win and how many extra deals were played (§14)."""

    eligible: tuple[int, ...]
    extra_deals: int


class State(NamedTuple):
    """A Bank match between two moves; the fields are the contract's, trumps split into
    `common` (per suit C, D, H, S) and `personal` (per seat)."""

    rules: Rules
    seats: int
    dealer: int
    common: tuple[int, int, int, int]  # class of C, D, H, S
    personal: tuple[str | None, ...]
    hands: tuple[tuple[str, ...], ...]  # canonical order
    stock: tuple[str, ...]
    bank: tuple[Entry, ...]
    target: Target | None
    turn: int | None
    drawn: bool
    out: tuple[Out, ...]
    captured: tuple[tuple[str, ...], ...]  # canonical order
    idle: int
    starter: int
    scores: tuple[int, ...]
    deal: int
    status: str
    winner: int | None
    winners: tuple[int, ...]
    tiebreak: Tiebreak | None
    seed: str | None

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form; `State.from_json` accepts it back."""
        target = self.target
        tiebreak = self.tiebreak
        data = {
            "game": "bank",
            "rules": self.rules.to_json(),
            "seats": self.seats,
            "dealer": self.dealer,
            "trumps": {"common": dict(zip(SUITS, self.common)), "personal": list(self.personal)},
            "hands": [list(hand) for hand in self.hands],
            "stock": list(self.stock),
            "bank": [{"card": card, "by": by} for card, by in self.bank],
            "target": None
            if target is None
            else {"card": target.card, "by": target.by, "virtual": target.virtual},
            "turn": self.turn,
            "drawn": self.drawn,
            "out": [
                {"seat": seat, "place": place, "finish": finish, "bonus": bonus}
                for seat, place, finish, bonus in self.out
            ],
            "captured": [list(pile) for pile in self.captured],
            "idle": self.idle,
            "starter": self.starter,
            "scores": list(self.scores),
            "deal": self.deal,
            "status": self.status,
            "winner": self.winner,
            "winners": list(self.winners),
            "tiebreak": None
            if tiebreak is None
            else {"eligible": list(tiebreak.eligible), "extra_deals": tiebreak.extra_deals},
        }
        if self.seed is not None:
            data["seed"] = self.seed
        return data

    @classmethod
    def from_json(cls, data: object) -> "State":
        """Read a state.

        :raises StateError: anything inconsistent, naming the field's JSON path.
        """
        return read_state(data)

    def holders(self) -> list[int]:
        """The seats still holding cards."""
        return [seat for seat, hand in enumerate(self.hands) if hand]


REQUIRED: Final = (
    "game", "rules", "seats", "dealer", "trumps", "hands", "stock", "bank", "target", "turn",
    "drawn", "out", "captured", "idle", "starter", "scores", "deal", "status", "winner",
    "winners", "tiebreak",
)  # fmt: skip


def read_state(data: object) -> State:
    """The state of a JSON form, or StateError naming its first wrong field. Each field is
    read in the contract's order; a field in the plain form the engine writes is taken at
    once, anything else by its careful reader, which names what is wrong or normalises
    the other accepted forms (`10C`, lowercase)."""
    data = fields.keys_of(data, REQUIRED, ("seed",), "bank")
    if data["game"] != "bank":
        raise StateError("game", f'must be "bank", not {shown(data["game"])}')
    rules, seats, common, personal = SETUP.read(
        (data["rules"], data["seats"], data["trumps"]), read_setup
    )
    dealer = fields.seat(data["dealer"], seats, "dealer")
    # The cards of a form as the engine writes it are checked in one go; any other form's
    # are read field by field, in the contract's order, each named where it is wrong.
    plain = plain_cards(data, seats)
    hands = plain[0] if plain else fields.card_lists(data["hands"], seats, "hands", CARDS, "seat")
    stock = plain[1] if plain else card_list(data["stock"], "stock")
    bank = plain[2] if plain else read_bank(data["bank"], seats)
    target = read_target(data["target"], seats)
    turn = fields.seat(data["turn"], seats, "turn", nullable=True)
    drawn = fields.boolean(data["drawn"], "drawn")
    out = read_out(data["out"], seats)
    captured = (
        plain[3] if plain else fields.card_lists(data["captured"], seats, "captured", CARDS, "seat")
    )
    idle = fields.integer(data["idle"], "idle", minimum=0)
    starter = fields.seat(data["starter"], seats, "starter")
    scores = fields.integers(data["scores"], seats, "scores", "seat")
    deal = fields.integer(data["deal"], "deal", minimum=1, maximum=MAX_DEALS)
    status = fields.one_value(data["status"], "status", (PLAYING, MATCH_OVER))
    winner = fields.seat(data["winner"], seats, "winner", nullable=True)
    winners = fields.ascending_seats(data["winners"], seats, "winners")
    tiebreak = read_tiebreak(data["tiebreak"], seats)
    seed = fields.seed(data.get("seed"), "seed")
    if plain is None:
        # Checked in the order given, so that a card twice is named where it was sent.
        check_cards(hands, stock, bank, captured)
        hands, captured = tuple(map(canonical, hands)), tuple(map(canonical, captured))
    # Built as the tuple it is: State's own __new__ is a Python function taking every field
    # by name only to call tuple.__new__ (about 1 us of a read).
    state = tuple.__new__(
        State,
        (rules, seats, dealer, common, personal, hands, stock, bank, target, turn, drawn, out,
         captured, idle, starter, scores, deal, status, winner, winners, tiebreak, seed),
    )  # fmt: skip
    check_trumps(state)
    check_target(state)
    check_out(state)
    check_status(state)
    check_tiebreak(state)
    return state


# --- reading fields -------------------------------------------------------------------

# The rules, seats and trumps of the states read, which stay the same through a deal and
# recur from match to match: read once, and then in one lookup of their text.
SETUP: Final = fields.FormMemo()
Setup = tuple[Rules, int, tuple[int, int, int, int], tuple[str | None, ...]]


def read_setup(form: tuple[object, object, object]) -> Setup:
    """The rules, seats and trumps of a state's (rules, seats, trumps) fields."""
    rules_form, seats_form, trumps_form = form
    try:
        rules = Rules.from_json(rules_form)
        seats = check_seats(seats_form)
    except RulesError as error:
        raise fields.under_rules(error) from error
    return (rules, seats, *read_trumps(trumps_form, seats))


def card_of(value: object, path: str) -> str:
    return fields.card(value, path, CARDS)


def card_list(value: object, path: str) -> tuple[str, ...]:
    return fields.cards(value, path, CARDS)


SUIT_KEYS: Final = frozenset(SUITS)
CLASSES: Final = frozenset((0, 1, 2))  # a suit's trump class; bools are refused by type first


def read_trumps(value: object, seats: int) -> tuple[tuple[int, int, int, int], tuple]:
    # The plain form, checked in C: the classes of C, D, H and S in that order, each 0, 1
    # or 2 (ints, never bools), and a suit or null per seat.
    if type(value) is dict:
        common, personal = value.get("common"), value.get("personal")
        if (
            type(common) is dict
            and tuple(common) == SUIT_NAMES
            and type(personal) is list
            and len(personal) == seats
        ):
            classes = tuple(common.values())
            try:
                if (
                    set(map(type, classes)) == {int}
                    and CLASSES.issuperset(classes)
                    and PERSONAL.issuperset(personal)
                ):
                    return classes, tuple(personal)
            except TypeError:
                pass  # something unhashable: the careful reading below names it
    trumps = fields.record(value, "trumps", ("common", "personal"))
    common = trumps["common"]
    if not isinstance(common, dict) or common.keys() != SUIT_KEYS:
        raise StateError("trumps.common", "must be an object giving the class of C, D, H and S")
    classes = tuple(
        fields.integer(common[suit], f"trumps.common.{suit}", minimum=0, maximum=2)
        for suit in SUITS
    )
    personal = fields.listed(trumps["personal"], seats, "trumps.personal", suit_or_null, "seat")
    return classes, personal


# The suits as a tuple: membership by equality, so that a value of any JSON type is refused
# in words rather than failing to hash.
SUIT_NAMES: Final = tuple(SUITS)
PERSONAL: Final = frozenset((*SUITS, None))  # what a seat's personal trump can be


def suit_or_null(item: object, path: str) -> str | None:
    """A seat's personal trump: a suit, or null."""
    if item is not None and item not in SUIT_NAMES:
        raise StateError(path, f"must be a suit (C, D, H or S) or null, got {shown(item)}")
    return item  # type: ignore[return-value]


CARD_AND_BY: Final = itemgetter("card", "by")
TARGET_KEYS: Final = frozenset(("card", "by", "virtual"))


def read_bank(value: object, seats: int) -> tuple[Entry, ...]:
    if not isinstance(value, list):
        raise StateError("bank", "must be a list of {card, by}, bottom to top")
    bank = []
    for index, item in enumerate(value):
        path = f"bank.{index}"
        entry = fields.record(item, path, ("card", "by"))
        by = fields.seat(entry["by"], seats, f"{path}.by", nullable=True)
        if by is None and index > 0:
            raise StateError(f"{path}.by", "only the bottom card of the bank can be a pack card")
        bank.append(Entry(card_of(entry["card"], f"{path}.card"), by))
    return tuple(bank)


Cards = tuple[str, ...]
PlainCards = tuple[tuple[Cards, ...], Cards, tuple[Entry, ...], tuple[Cards, ...]]


def plain_cards(data: dict, seats: int) -> PlainCards | None:
    """Hands, stock, bank and captured piles of a form as the engine writes it (hands and
    piles then put in canonical order), its cards checked at once: a list per seat of
    hands and of piles, the bank's entries plain, and every card of the pack exactly once.
    None for any other form, which the careful readers then read and name what is wrong
    with."""
    hands, stock, captured = data["hands"], data["stock"], data["captured"]
    entries = plain_entries(data["bank"], seats)
    if (
        entries is None
        or type(hands) is not list
        or type(captured) is not list
        or len(hands) != seats
        or len(captured) != seats
        or not fields.whole_pack([*hands, stock, [*map(itemgetter(0), entries)], *captured], CARDS)
    ):
        return None
    bank = tuple(map(tuple.__new__, repeat(Entry), entries))
    return tuple(map(canonical, hands)), tuple(stock), bank, tuple(map(canonical, captured))


def plain_entries(value: object, seats: int) -> list[tuple[object, object]] | None:
    """The (card, by) of each entry of a plain bank, checked in C: objects with card and
    by, laid by seats (ints, never bools) but for a pack card at the bottom; its cards are
    left to the caller. None for anything else."""
    if value == []:
        return []  # an empty bank: after a capture, or before the first lay
    if type(value) is not list or set(map(type, value)) != {dict}:
        return None
    try:
        entries = list(map(CARD_AND_BY, value))
    except KeyError:
        return None
    laid_by = [*map(itemgetter(1), entries)]
    if laid_by[0] is None:
        del laid_by[0]  # a pack card at the bottom
    return entries if fields.are_seats(laid_by, seats) else None


def read_target(value: object, seats: int) -> Target | None:
    if value is None:
        return None
    if type(value) is dict and value.keys() >= TARGET_KEYS:
        card, by, virtual = value["card"], value["by"], value["virtual"]
        if (
            type(card) is str
            and card in CARDS
            and (by is None or (type(by) is int and 0 <= by < seats))
            and type(virtual) is bool
        ):
            return tuple.__new__(Target, (card, by, virtual))
    target = fields.record(value, "target", ("card", "by", "virtual"))
    return Target(
        card_of(target["card"], "target.card"),
        fields.seat(target["by"], seats, "target.by", nullable=True),
        fields.boolean(target["virtual"], "target.virtual"),
    )


def read_out(value: object, seats: int) -> tuple[Out, ...]:
    if not isinstance(value, list):
        raise StateError("out", "must be a list of {seat, place, finish, bonus}")
    if len(value) > min(3, seats - 1):
        raise StateError("out", f"at most {min(3, seats - 1)} seats can be out with {seats} seats")
    out: list[Out] = []
    for index, item in enumerate(value):
        path = f"out.{index}"
        entry = fields.record(item, path, ("seat", "place", "finish", "bonus"))
        seat = fields.seat(entry["seat"], seats, f"{path}.seat")
        if any(seat == earlier.seat for earlier in out):
            raise StateError(f"{path}.seat", f"seat {seat} is already out")
        place = fields.integer(entry["place"], f"{path}.place")
        if place != index + 1:
            raise StateError(f"{path}.place", f"entry {index} of out must have place {index + 1}")
        finish = fields.one_value(entry["finish"], f"{path}.finish", tuple(BONUS))
        bonus = fields.integer(entry["bonus"], f"{path}.bonus")
        if bonus != BONUS[finish][index]:
            raise StateError(
                f"{path}.bonus", f"a {finish} finish in place {place} earns {BONUS[finish][index]}"
            )
        out.append(Out(seat, place, finish, bonus))
    return tuple(out)


def read_tiebreak(value: object, seats: int) -> Tiebreak | None:
    if value is None:
        return None
    tiebreak = fields.record(value, "tiebreak", ("eligible", "extra_deals"))
    eligible = fields.ascending_seats(tiebreak["eligible"], seats, "tiebreak.eligible")
    if len(eligible) < 2:
        raise StateError("tiebreak.eligible", "a tie-break needs at least two tied seats")
    extra = fields.integer(
        tiebreak["extra_deals"], "tiebreak.extra_deals", minimum=0, maximum=EXTRA_DEALS
    )
    return Tiebreak(eligible, extra)


# --- consistency across fields ----------------------------------------------------------


def card_places(
    hands: tuple[Cards, ...], stock: Cards, bank: tuple[Entry, ...], captured: tuple[Cards, ...]
) -> Iterator[tuple[str, str]]:
    """(JSON path, card) of every card in hands, stock, bank and captured piles."""
    for seat, hand in enumerate(hands):
        for index, card in enumerate(hand):
            yield f"hands.{seat}.{index}", card
    for index, card in enumerate(stock):
        yield f"stock.{index}", card
    for index, entry in enumerate(bank):
        yield f"bank.{index}.card", entry.card
    for seat, pile in enumerate(captured):
        for index, card in enumerate(pile):
            yield f"captured.{seat}.{index}", card


def check_cards(
    hands: tuple[Cards, ...], stock: Cards, bank: tuple[Entry, ...], captured: tuple[Cards, ...]
) -> None:
    """Rule 2: each of the 36 cards exactly once in hands, stock, bank and captured piles
    (as read, before the canonical order: a card twice is named at its place in the form)."""
    every = [*chain.from_iterable(hands), *stock, *map(itemgetter(0), bank),
             *chain.from_iterable(captured)]  # fmt: skip
    if len(every) == len(DECK) == len(set(every)):
        return  # every card is one of the pack's already: 36 distinct ones are all of it
    seen: dict[str, str] = {}  # the careful pass, only to name what is wrong
    for path, card in card_places(hands, stock, bank, captured):
        if card in seen:
            raise StateError(path, f"{card} is already at {seen[card]}; every card appears once")
        seen[card] = path
    missing = [card for card in DECK if card not in seen]
    if missing:
        raise StateError(
            "state",
            f"cards missing from hands, stock, bank and captured piles: {' '.join(missing)}",
        )


def check_trumps(state: State) -> None:
    """Rule 3: the trumps match `trump_mode`."""
    mode = state.rules.trump_mode
    if mode == "single":
        if sorted(state.common) != [0, 0, 0, 1]:
            raise StateError("trumps.common", "under trump_mode single exactly one suit is 1")
    elif state.common != COMMON[mode]:
        for suit, got, expected in zip(SUITS, state.common, COMMON[mode]):
            if got != expected:
                raise StateError(
                    f"trumps.common.{suit}", f"must be {expected} under trump_mode {mode}"
                )
    personal = state.personal
    if mode == "per_player":
        if None not in personal and len(set(personal)) == len(personal):
            return
    elif personal.count(None) == len(personal):
        return
    for seat, own in enumerate(personal):  # the careful pass, only to name what is wrong
        path = f"trumps.personal.{seat}"
        if mode != "per_player" and own is not None:
            raise StateError(path, f"must be null under trump_mode {mode}")
        if mode == "per_player":
            if own is None:
                raise StateError(path, "every seat has its own trump suit under per_player")
            if own in personal[:seat]:
                raise StateError(path, f"{own} is already another seat's trump")


def check_target(state: State) -> None:
    """Rule 5: the target is the bank's top card, or after a capture virtual or none."""
    target = state.target
    if state.bank:
        top = state.bank[-1]
        if target is None:
            raise StateError("target", f"must be the bank's top card {top.card}")
        if target.card != top.card:
            raise StateError("target.card", f"must be the bank's top card {top.card}")
        if target.by != top.by:
            raise StateError("target.by", f"must be {shown(top.by)}, who laid the top card")
        if target.virtual:
            raise StateError("target.virtual", "must be false while the bank holds cards")
        return
    if state.rules.after_capture == "free_lead":
        if target is not None:
            raise StateError("target", "must be null on an empty bank under free_lead")
        return
    if target is None:
        raise StateError("target", "must be the virtual top card of the bank last taken")
    if target.by is not None:
        raise StateError("target.by", "must be null for a virtual target")
    if not target.virtual:
        raise StateError("target.virtual", "must be true on an empty bank")
    if target.card not in chain.from_iterable(state.captured):
        raise StateError("target.card", f"{target.card} must lie in a captured pile")


def check_out(state: State) -> None:
    """Rule 6: the seats out are exactly the seats with empty hands."""
    if not state.out and all(state.hands):
        return  # nobody out yet, every seat holding cards: most of a deal
    for index, entry in enumerate(state.out):
        if state.hands[entry.seat]:
            raise StateError(f"out.{index}.seat", f"seat {entry.seat} still holds cards")
    out = {entry.seat for entry in state.out}
    for seat, hand in enumerate(state.hands):
        if not hand and seat not in out:
            raise StateError(f"hands.{seat}", f"seat {seat} holds no cards but is not out")


def check_status(state: State) -> None:
    """Rule 7: turn, holders, winners and the blocked deal agree with `status`."""
    holders = len(state.hands) - state.hands.count(())  # seats holding cards
    if state.status == PLAYING:
        if state.turn is None or not state.hands[state.turn]:
            raise StateError("turn", "must be a seat holding cards while playing")
        if holders < 2:
            raise StateError("hands", "at least two seats hold cards while the deal is played")
        if state.winner is not None:
            raise StateError("winner", "must be null while playing")
        if state.winners:
            raise StateError("winners", "must be empty while playing")
        if not state.stock and state.idle >= holders:
            raise StateError(
                "idle",
                f"{state.idle} passes with an empty stock and {holders} seats holding "
                "cards: that deal is already over",
            )
        return
    if state.turn is not None:
        raise StateError("turn", "must be null once the match is over")
    if not state.winners:
        raise StateError("winners", "must name the winning seats once the match is over")
    single = state.winners[0] if len(state.winners) == 1 else None
    if state.winner != single:
        raise StateError("winner", f"must be {shown(single)}, given winners {list(state.winners)}")
    if not holders:
        raise StateError("hands", "the loser of the final deal still holds cards")


def check_tiebreak(state: State) -> None:
    """Rule 8: at most 4 extra deals played while the match goes on."""
    if state.tiebreak and state.status == PLAYING and state.tiebreak.extra_deals >= EXTRA_DEALS:
        raise StateError("tiebreak.extra_deals", "must be 0 to 4 while playing")
