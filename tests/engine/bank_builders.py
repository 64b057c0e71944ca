"""Bank states in their wire form, built from the short notation of the worked cases, and
the helpers that play them through the game protocol only (never the engine's internals).

A position names only what matters; everything else follows the cases' conventions: no
trumps, classic options, seat 0 to move, dealer `n - 1`, starter 0, nothing drawn, `idle` 0,
nobody out, deal 1, scores 0, no tie-break. A seat whose hand is not given holds two
pointless cards it never plays; the cards nobody names lie in the stock after the named
stock cards (canonical order), or in one seat's captured pile when the stock is empty.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.cards import deck, sort_cards
from engine.game import Game

DECK = deck("6789TJQKA")
SUITS = "CDHS"
GAME_ORDER = "6789JQKTA"
CARD_POINTS = {"A": 12, "T": 10, "K": 5, "Q": 3, "J": 1}
BONUS = {
    "plain": (20, 10, 10),
    "king": (30, 20, 10),
    "trump_king": (30, 20, 10),
    "four_kings": (30, 20, 10),
    "run": (30, 25, 20),
    "quad": (75, 75, 75),
}
CLASSIC = {
    "target_score": 248,
    "dealer_rule": "loser",
    "trump_mode": "per_player",
    "after_seven": "skip",
    "after_capture": "virtual_target",
    "hand_penalty": True,
    "penalty_mode": "hand_points",
    "fixed_penalty": 31,
    "per_card_penalty": 3,
}
SIDE_KEYS = ("captured_points", "finish", "place", "bonus", "penalty", "total")
TOP = "top"
# Zero-point cards a seat the case does not mention can hold without ever playing them.
FILLERS = ("9C", "9D", "9H", "9S", "6C", "6D", "6H", "6S", "7C", "7D", "7H", "7S")


def cards(text: str) -> list[str]:
    """`"AC 7D"` -> `["AC", "7D"]`; the empty string is no cards."""
    return text.split()


def points(text: str) -> int:
    """The card points of the cards named in `text`."""
    return sum(CARD_POINTS.get(card[0], 0) for card in cards(text))


def entries(text: str) -> list[dict[str, Any]]:
    """A bank bottom -> top from `"KH/P QH/0"`: `P` is a pack card (`by` null)."""
    bank = []
    for entry in cards(text):
        card, by = entry.split("/")
        bank.append({"card": card, "by": None if by == "P" else int(by)})
    return bank


def trumps_of(spec: str, seats: int) -> tuple[str, dict[str, Any]]:
    """The trump mode and the `trumps` object the contract pairs with it, from `"none"`,
    `"single H"`, `"double"`, `"senior_junior"` or `"per_player H S ..."` (seat 0 first)."""
    mode, *suits = spec.split()
    common = dict.fromkeys(SUITS, 0)
    personal: list[str | None] = [None] * seats
    if mode == "single":
        common[suits[0]] = 1
    elif mode == "double":
        common.update(D=1, S=1)
    elif mode == "senior_junior":
        common.update(D=1, S=2)
    elif mode == "per_player":
        personal = list(suits)
    return mode, {"common": common, "personal": personal}


def out_entries(out: Sequence[tuple[int, str]]) -> list[dict[str, Any]]:
    """`out` entries in finishing order from `(seat, finish)` pairs, with §12.1's bonus."""
    return [
        {"seat": seat, "place": place, "finish": finish, "bonus": BONUS[finish][place - 1]}
        for place, (seat, finish) in enumerate(out, start=1)
    ]


def bank_state(
    seats: int,
    *,
    hands: Mapping[int, str],
    bank: str = "",
    target: str | None = TOP,
    trumps: str = "none",
    rules: Mapping[str, Any] | None = None,
    turn: int = 0,
    dealer: int | None = None,
    starter: int = 0,
    drawn: bool = False,
    idle: int = 0,
    out: Sequence[tuple[int, str]] = (),
    deal: int = 1,
    scores: Sequence[int] | None = None,
    tiebreak: tuple[Sequence[int], int] | None = None,
    stock: str = "",
    rest_to: int | None = None,
    captured: Mapping[int, str] | None = None,
    seed: str | None = "bank-cases",
) -> dict[str, Any]:
    """The JSON of a position. `target`: `TOP` for the bank's top entry, a card for a
    virtual target, None for none. `rest_to`: the seat whose captured pile receives the
    unnamed cards (the stock then holds only `stock`); None puts them in the stock."""
    mode, trumps_json = trumps_of(trumps, seats)
    out_seats = {seat for seat, _ in out}
    captured = captured or {}
    hand_lists = [cards(hands.get(seat, "")) for seat in range(seats)]
    piles = [cards(captured.get(seat, "")) for seat in range(seats)]
    bank_list = entries(bank)
    named = {*cards(stock), *(entry["card"] for entry in bank_list)}
    named.update(card for place in (*hand_lists, *piles) for card in place)
    spare = [card for card in FILLERS if card not in named]
    for seat in range(seats):
        if seat not in hands and seat not in out_seats:
            hand_lists[seat], spare = spare[:2], spare[2:]
            named.update(hand_lists[seat])
    rest = [card for card in DECK if card not in named]
    stock_list = cards(stock)
    if rest_to is None:
        stock_list += rest
    else:
        piles[rest_to] += rest
    if target == TOP:
        top = bank_list[-1]
        target_json = {"card": top["card"], "by": top["by"], "virtual": False}
    elif target is None:
        target_json = None
    else:
        target_json = {"card": target, "by": None, "virtual": True}
    data = {
        "game": "bank",
        "rules": {"preset": "classic", "trump_mode": mode, **(rules or {})},
        "seats": seats,
        "dealer": seats - 1 if dealer is None else dealer,
        "trumps": trumps_json,
        "hands": [sort_cards(hand) for hand in hand_lists],
        "stock": stock_list,
        "bank": bank_list,
        "target": target_json,
        "turn": turn,
        "drawn": drawn,
        "out": out_entries(out),
        "captured": [sort_cards(pile) for pile in piles],
        "idle": idle,
        "starter": starter,
        "scores": list(scores) if scores is not None else [0] * seats,
        "deal": deal,
        "status": "playing",
        "winner": None,
        "winners": [],
        "tiebreak": None if tiebreak is None else
        {"eligible": list(tiebreak[0]), "extra_deals": tiebreak[1]},
    }  # fmt: skip
    if seed is not None:
        data["seed"] = seed
    return data


def move_json(text: str) -> dict[str, Any]:
    """A move from the cases' notation: `lay 7C`, `quad 9C 9D 9H 9S`, `run ...`, `draw`,
    `pass`."""
    kind, *named = text.split()
    if kind == "lay":
        return {"type": "lay", "card": named[0]}
    if kind in ("quad", "run"):
        return {"type": kind, "cards": named}
    return {"type": kind}


def move_key(move: Mapping[str, Any]) -> tuple:
    """What identifies a move: its type and its card or cards (the server may add fields)."""
    if "cards" in move:
        return move["type"], tuple(move["cards"])
    if "card" in move:
        return move["type"], move["card"]
    return (move["type"],)


def legal(game: Game, state: Any) -> list[tuple]:
    """The keys of every listed legal move, in the order the game lists them."""
    return [move_key(game.write_move(state, move)) for move in game.legal_moves(state)]


def assert_legal(game: Game, state: Any, *moves: str) -> None:
    """The legal moves are exactly `moves`, each listed once."""
    listed = legal(game, state)
    assert len(listed) == len(set(listed)), f"a move is listed twice: {listed}"
    assert set(listed) == {move_key(move_json(move)) for move in moves}


def play(game: Game, state: Any, move: str | Mapping[str, Any]) -> tuple[Any, list[dict]]:
    """Apply one move given in the cases' notation (or as JSON); the new state must read
    back from its own JSON."""
    data = move_json(move) if isinstance(move, str) else move
    after, events = game.apply(state, game.read_move(state, data))
    written = game.write(after)
    assert game.write(game.read(written)) == written
    return after, events


def assert_events(events: Sequence[Mapping[str, Any]], *expected: Mapping[str, Any]) -> None:
    """The events are exactly `expected`, in order, each with at least the fields given."""
    assert [event["type"] for event in events] == [event["type"] for event in expected], events
    for event, wanted in zip(events, expected):
        assert {key: event.get(key) for key in wanted} == dict(wanted), event


def lay(seat: int, card: str) -> dict[str, Any]:
    return {"type": "lay", "seat": seat, "card": card}


def quad(seat: int, laid: str) -> dict[str, Any]:
    return {"type": "quad", "seat": seat, "cards": cards(laid)}


def run(seat: int, laid: str) -> dict[str, Any]:
    return {"type": "run", "seat": seat, "cards": cards(laid)}


def draw(seat: int, card: str | None, forced: bool = False) -> dict[str, Any]:
    return {"type": "draw", "seat": seat, "card": card, "forced": forced}


def passed(seat: int) -> dict[str, Any]:
    return {"type": "pass", "seat": seat}


def capture(seat: int, taken: str, worth: int, why: str) -> dict[str, Any]:
    return {"type": "capture", "seat": seat, "cards": cards(taken), "points": worth, "why": why}


def skip(seat: int) -> dict[str, Any]:
    return {"type": "skip", "seat": seat}


def turn_up(card: str) -> dict[str, Any]:
    return {"type": "turn_up", "card": card}


def went_out(seat: int, place: int, finish: str, bonus: int) -> dict[str, Any]:
    return {"type": "out", "seat": seat, "place": place, "finish": finish, "bonus": bonus}


def side(
    captured_points: int,
    finish: str | None = None,
    place: int | None = None,
    bonus: int = 0,
    penalty: int = 0,
    total: int | None = None,
) -> dict[str, Any]:
    """One seat's row of a deal's breakdown; `total` defaults to what §12 makes of it."""
    if total is None:
        total = captured_points + bonus - penalty
    return dict(zip(SIDE_KEYS, (captured_points, finish, place, bonus, penalty, total)))


def sides_of(breakdown: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A breakdown reduced to the contract's keys (the server may add more)."""
    return [{key: row[key] for key in SIDE_KEYS} for row in breakdown]


def first_player(hands: Sequence[Iterable[str]], pack: str, dealer: int) -> int:
    """§4.3 written out independently: a lower card of the pack card's suit, else a higher
    one, else the dealer's left; ties go to the first seat from the dealer's left."""
    seats = len(hands)
    order = [(dealer + step) % seats for step in range(1, seats + 1)]
    pack_rank = GAME_ORDER.index(pack[0])
    for wanted in (lambda rank: rank < pack_rank, lambda rank: rank > pack_rank):
        for seat in order:
            if any(c[1] == pack[1] and wanted(GAME_ORDER.index(c[0])) for c in hands[seat]):
                return seat
    return order[0]


def assert_fresh_deal(
    data: Mapping[str, Any],
    *,
    deal: int,
    dealer: int,
    trumps: Mapping[str, Any],
    scores: Sequence[int],
) -> None:
    """A deal just dealt (§4, §13): four cards a hand, one pack card as bank and target,
    the rest in the stock, the first player to move, nothing captured, nobody out."""
    seats = data["seats"]
    assert data["deal"] == deal and data["dealer"] == dealer
    assert data["trumps"] == trumps and data["scores"] == list(scores)
    assert [len(hand) for hand in data["hands"]] == [4] * seats
    assert len(data["stock"]) == 36 - 4 * seats - 1
    assert len(data["bank"]) == 1 and data["bank"][0]["by"] is None
    pack = data["bank"][0]["card"]
    assert data["target"] == {"card": pack, "by": None, "virtual": False}
    everything = [*(c for hand in data["hands"] for c in hand), *data["stock"], pack]
    assert sorted(everything) == sorted(DECK)
    assert data["starter"] == first_player(data["hands"], pack, dealer)
    assert data["turn"] == data["starter"]
    assert data["captured"] == [[] for _ in range(seats)] and data["out"] == []
    assert data["idle"] == 0 and data["drawn"] is False
    assert data["status"] == "playing" and data["winner"] is None and data["winners"] == []


def deal_event(data: Mapping[str, Any]) -> dict[str, Any]:
    """The `deal` event that must announce the deal `data` holds."""
    return {
        "type": "deal",
        "deal": data["deal"],
        "dealer": data["dealer"],
        "starter": data["starter"],
        "card": data["bank"][0]["card"],
    }
