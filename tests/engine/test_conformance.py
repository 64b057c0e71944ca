"""One property suite every registered game passes by being registered (engine.game.games),
Tricks too (tests/games/tricks, the example of docs/adding-a-game.md, mounted as
`engine.tricks`: a game with no stock, whose matches are short):
random legal play keeps every card, replays identically, ends, round-trips its JSON,
refuses illegal moves without changing anything, and never shows a seat a card it cannot
see. Bank's legal moves are also checked against a brute-force oracle written straight
from its rules (§3, §6, §7)."""

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bots import LEVELS, PLAYERS, choose_move, hint
from engine.bots.expert import expert_player
from engine.cards import ORDER, sort_cards
from engine.errors import GameError
from engine.game import Game, games, get_game
from tests.engine.hidden import hidden_shuffle
from tests.service.new_game import tricks_registered

with tricks_registered():
    GAMES = sorted(games())
    SEAT_COUNTS = {name: get_game(name).catalogue()["seats"] for name in GAMES}
PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MOVE_LIMIT = 60_000  # far beyond any match these games allow; reaching it means a loop
# Games whose every rule option is explored (the others play their presets): Basra's house
# rules include `any_family`, whose listings may be refused as too large on purpose.
EXPLORED = {"bank"}


def option_values(shape: dict[str, Any], default: object) -> st.SearchStrategy:
    """Values of one declared option: each of an enum, both booleans, and for a number its
    least value beside its default (the least target ends a match soonest)."""
    if "enum" in shape:
        return st.sampled_from(shape["enum"])
    if shape.get("type") == "boolean":
        return st.booleans()
    return st.sampled_from(sorted({shape.get("minimum", default), default}))


def explored_options(game: Game) -> dict[str, st.SearchStrategy]:
    """A strategy per rule option of `game`, from the shapes the game declares."""
    if game.name not in EXPLORED:
        return {}
    defaults = game.catalogue()["options"]
    return {
        name: option_values(dict(shape), defaults[name])
        for name, shape in game.shapes.options.items()
    }


@pytest.fixture(scope="module", autouse=True)
def tricks_mounted() -> Iterator[None]:
    """Tricks is found as `engine.tricks` while this suite runs, forgotten after it."""
    with tricks_registered():
        yield


GARBAGE: list[object] = [None, [], "pass", {}, {"type": "fold"}, {"card": "ZZ"}, {"type": 3}]


def bank_deal_bound(seats: int) -> int:
    """§16: a Bank deal ends within Φ₀ + (n + 1)(Φ₀ + 1) moves."""
    phi = 2 * (36 - 4 * seats - 1) + 4 * seats
    return phi + (seats + 1) * (phi + 1)


# Per game that numbers its deals in the state: (that field, the most moves one deal takes).
DEAL_BOUNDS = {"bank": ("deal", bank_deal_bound)}


@st.composite
def matches(draw, name: str) -> tuple[Game, Any, random.Random, tuple]:
    """A fresh match of game `name`, the seeded random mover that will play it, and the
    arguments of `new` that dealt it (a preset with overrides, a seat count, a seed)."""
    game = get_game(name)
    catalogue = game.catalogue()
    rules = {"preset": draw(st.sampled_from(sorted(catalogue["presets"])))}
    rules |= draw(st.fixed_dictionaries({}, optional=explored_options(game)))
    seats = draw(st.sampled_from(catalogue["seats"]))
    seed = "seed-" + draw(st.text(alphabet="0123456789abcdef", min_size=6, max_size=12))
    mover = random.Random(draw(st.integers(0, 2**32 - 1)))
    return game, game.new(rules, seats, seed), mover, (rules, seats, seed)


def played(game: Game, state: Any, rng: random.Random) -> Iterator[tuple[Any, Any, Any, list]]:
    """(state, move, next state, events) of a random match until it is over."""
    for _ in range(MOVE_LIMIT):
        if game.to_move(state) is None:
            return
        move = rng.choice(game.legal_moves(state))
        after, events = game.apply(state, move)
        yield state, move, after, events
        state = after
    raise AssertionError("the match did not end")


def cards_in(data: object) -> set[str]:
    """Every card named anywhere in a JSON value (the seed aside)."""
    if isinstance(data, str):
        return {data} if data in ORDER else set()
    if isinstance(data, dict):
        return set().union(*(cards_in(v) for k, v in data.items() if k != "seed"))
    if isinstance(data, list):
        return set().union(*map(cards_in, data))
    return set()


def hidden_from(data: dict[str, Any], seat: int | None) -> set[str]:
    """The cards `seat` (None: a spectator) cannot see: the other hands and the stock (a
    game may have none: Tricks deals every card)."""
    hidden = set(data.get("stock", ()))
    for other, hand in enumerate(data["hands"]):
        if other != seat:
            hidden.update(hand)
    return hidden


def shown(cards: set[str], data: object) -> list[str]:
    text = json.dumps(data)
    return sorted(card for card in cards if f'"{card}"' in text)


def check_round_trip(game: Game, state: Any) -> dict[str, Any]:
    """The state's JSON reads back (which checks that every card is there exactly once)
    and writes the same."""
    data = game.write(state)
    again = game.read(json.loads(json.dumps(data)))
    assert game.write(again) == data
    return data


def check_views(
    game: Game, before: dict, after: dict, state: Any, events: list, played: set[str]
) -> None:
    """Neither the view nor the events of a move show a seat a card it could not see before
    the move and still cannot see after it, unless the move itself played that card."""
    for seat in [*range(len(after["hands"])), None]:
        view = game.view(state, seat)
        assert not shown(hidden_from(after, seat), view), seat
        assert "seed" not in view and (after.get("seed") or "\0") not in json.dumps(view)
        if seat is not None:
            assert sort_cards(view["hand"]) == sort_cards(after["hands"][seat])
        secret = (hidden_from(before, seat) & hidden_from(after, seat)) - played
        assert not shown(secret, game.events_for(events, seat)), (seat, events)


def check_refusals(game: Game, state: Any, candidates: list[object]) -> None:
    """Every listed move reads back as itself; anything else read_move accepts is listed;
    whatever it refuses, apply refuses too, with a GameError, and the state is unchanged."""
    legal = game.legal_moves(state)
    assert len(legal) == len(set(legal)), "a move is listed twice"
    for move in legal:
        assert game.read_move(state, game.write_move(state, move)) == move
    frozen = game.write(state)
    for candidate in candidates:
        try:
            read = game.read_move(state, candidate)
        except GameError as error:
            assert error.path.startswith("move")
            with pytest.raises(GameError):
                game.apply(state, candidate)
            assert game.write(state) == frozen
        else:
            assert read in legal, candidate


@pytest.mark.parametrize("name", GAMES)
@PROPERTY
@given(data=st.data())
def test_random_matches_keep_every_invariant(name: str, data: st.DataObject) -> None:
    game, state, rng, _ = data.draw(matches(name))
    bound = DEAL_BOUNDS.get(name)
    deck = cards_in(game.write(state))
    before = check_round_trip(game, state)
    elsewhere: list[object] = []
    deal_moves = 0
    for _, move, after, events in played(game, state, rng):
        assert events and all(isinstance(event.get("type"), str) for event in events)
        data_after = check_round_trip(game, after)
        assert cards_in(data_after) == deck, "a card vanished or appeared"
        named = cards_in(game.write_move(state, move))
        check_views(game, before, data_after, after, events, named)
        if game.to_move(after) is not None and rng.random() < 0.2:
            check_refusals(game, after, [*rng.sample(elsewhere, min(4, len(elsewhere))), *GARBAGE])
        elsewhere.append(game.write_move(state, move))
        if bound:
            field, most = bound
            deal_moves = 1 if data_after[field] != before[field] else deal_moves + 1
            assert deal_moves <= most(len(data_after["hands"])), "a deal outran its bound"
        before, state = data_after, after
    outcome = game.outcome(state)
    assert outcome is not None and outcome.winners
    assert game.legal_moves(state) == []
    with pytest.raises(GameError):
        game.read_move(state, elsewhere[-1])


@pytest.mark.parametrize("name", GAMES)
@PROPERTY
@given(data=st.data(), length=st.integers(1, 400))
def test_same_seed_and_moves_give_the_same_game(
    name: str, data: st.DataObject, length: int
) -> None:
    game, state, rng, dealt = data.draw(matches(name))
    start = game.write(state)
    record = []
    for before, move, after, events in played(game, state, rng):
        record.append((game.write_move(before, move), game.write(after), events))
        if len(record) == length:
            break
    replay = game.new(*dealt)
    assert game.write(replay) == start
    for move, expected, expected_events in record:
        replay, events = game.apply(replay, game.read_move(replay, move))
        assert game.write(replay) == expected
        assert events == expected_events


@pytest.mark.parametrize("name", GAMES)
@PROPERTY
@given(data=st.data(), mover=st.integers(0, 2**32 - 1))
def test_a_state_without_a_seed_deals_on_from_itself(
    name: str, data: st.DataObject, mover: int
) -> None:
    """Contract: a state without a seed is valid; later deals derive from the state alone."""
    game, state, _, _ = data.draw(matches(name))
    seedless = {key: value for key, value in game.write(state).items() if key != "seed"}
    games_played = []
    for _ in range(2):
        record = [
            game.write(after)
            for *_, after, _ in played(game, game.read(seedless), random.Random(mover))
        ]
        assert all("seed" not in written for written in record)
        games_played.append(record)
    assert games_played[0] == games_played[1]


@pytest.mark.parametrize("name", GAMES)
@PROPERTY
@given(data=st.data())
def test_determinize_hides_only_what_the_seat_cannot_see(name: str, data: st.DataObject) -> None:
    game, state, rng, _ = data.draw(matches(name))
    for index, (before, *_) in enumerate(played(game, state, rng)):
        if index > 60:
            break
        seat = game.to_move(before)
        world = game.determinize(before, seat, random.Random(index))
        assert game.view(world, seat) == game.view(before, seat)
        # Every seat and spectator of a hosted session reads `score`: it counts no card the
        # seat cannot see (a hand's points would tell them).
        assert game.score(world) == game.score(before)
        check_round_trip(game, world)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("level", sorted(PLAYERS))
def test_every_bot_level_plays_a_legal_move(name: str, level: str) -> None:
    """The bots reach a game through the protocol alone, with or without its search
    knowledge (the expert on a small budget here)."""
    game = get_game(name)
    seats = max(game.catalogue()["seats"])
    state = game.new({}, seats, f"bots/{name}")
    for ply in range(40):
        if game.to_move(state) is None:
            break
        if level == "expert":
            move, alternatives = expert_player(game, state, f"{ply}", iterations=2)
        else:
            move, alternatives = PLAYERS[level](game, state, f"{ply}")
        assert move in game.legal_moves(state)
        assert [option for option, _ in alternatives] == game.legal_moves(state)
        state, _ = game.apply(state, move)


# Matches played at most to find a test's positions: a short game (Tricks deals 24 cards
# in all) may hold fewer than a test asks for in one.
MOST_MATCHES = 20


def choices(name: str, seats: int, count: int, seed: str) -> list[Any]:
    """`count` positions with a choice to make (two legal moves or more), spread over
    matches of `name` played with random moves (as many as it takes, up to MOST_MATCHES)."""
    game, rng = get_game(name), random.Random(seed)
    found: list[Any] = []
    for match in range(MOST_MATCHES):
        state = game.new({}, seats, seed if match == 0 else f"{seed}/{match}")
        while game.to_move(state) is not None and len(found) < count:
            if len(game.legal_moves(state)) > 1 and rng.random() < 0.3:
                found.append(state)
            state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
        if len(found) == count:
            break
    return found


SEATINGS = [(name, seats) for name in GAMES for seats in SEAT_COUNTS[name]]


@pytest.mark.parametrize(("name", "seats"), SEATINGS)
@pytest.mark.parametrize("level", LEVELS)
def test_every_level_weighs_every_legal_move_and_plays_one(name, seats, level) -> None:
    game = get_game(name)
    found = choices(name, seats, 6 if level == "expert" else 30, f"legal/{name}/{seats}")
    assert len(found) >= 6
    for index, state in enumerate(found):
        legal = game.legal_moves(state)
        move, alternatives = hint(game, state, level, f"seed {index}")
        assert move in legal
        assert [alternative for alternative, _ in alternatives] == legal
        assert all(isinstance(value, float) for _, value in alternatives)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("level", LEVELS)
def test_same_seed_same_decision(name: str, level: str) -> None:
    game = get_game(name)
    for index, state in enumerate(choices(name, min(game.catalogue()["seats"]), 5, "same")):
        first = hint(game, state, level, f"s{index}")
        assert hint(game, state, level, f"s{index}") == first
        assert choose_move(game, state, level, f"s{index}") == first[0]


@pytest.mark.parametrize(("name", "seats"), SEATINGS)
@pytest.mark.parametrize("level", LEVELS)
def test_a_decision_ignores_cards_the_seat_cannot_see(name, seats, level) -> None:
    game, rng = get_game(name), random.Random(f"{name}{seats}{level}")
    for index, state in enumerate(choices(name, seats, 4, f"hidden/{name}/{seats}")):
        seat = game.to_move(state)
        other = hidden_shuffle(state, seat, rng)
        assert game.write(other) != game.write(state)
        assert game.view(other, seat) == game.view(state, seat)
        assert hint(game, other, level, f"h{index}") == hint(game, state, level, f"h{index}")


def decisions(games: tuple[str, ...] = ("basra", "bank")) -> str:
    """Every level's seeded hint on a few positions of each game with the most seats, as
    JSON: what one process decides, to compare with another's."""
    found = []
    for name in games:
        game = get_game(name)
        for index, state in enumerate(choices(name, max(SEAT_COUNTS[name]), 3, f"hash/{name}")):
            for level in LEVELS:
                move, weighed = hint(game, state, level, f"hash {index}")
                written = [[game.write_move(state, option), value] for option, value in weighed]
                found.append([name, level, game.write_move(state, move), written])
    return json.dumps(found)


def test_a_decision_is_the_same_under_any_hash_seed() -> None:
    # Sets and dicts keyed by strings iterate in an order PYTHONHASHSEED picks per process.
    script = "from tests.engine.test_conformance import decisions; print(decisions())"
    root = Path(__file__).resolve().parents[2]
    answers = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "4242")
    }
    assert answers == {decisions() + "\n"}


@pytest.mark.parametrize("name", GAMES)
def test_no_level_but_the_known_and_no_move_once_the_match_is_over(name: str) -> None:
    game = get_game(name)
    state = game.new({}, min(game.catalogue()["seats"]), "over")
    with pytest.raises(ValueError, match="unknown level"):
        choose_move(game, state, "grandmaster", "seed")
    while game.to_move(state) is not None:
        state, _ = game.apply(state, game.legal_moves(state)[0])
    with pytest.raises(ValueError, match="over"):
        choose_move(game, state, "greedy", "seed")


# --- Bank: a brute-force oracle of the legal moves -------------------------------------

BANK_PACK = [rank + suit for suit in "CDHS" for rank in "6789TJQKA"]
ORDER_OF_PLAY = "6789JQKTA"
QUAD_SETS = [tuple(rank + suit for suit in "CDHS") for rank in ORDER_OF_PLAY]
RUN_SETS = [
    tuple(rank + suit for rank in ORDER_OF_PLAY[low : low + 4])
    for suit in "CDHS"
    for low in range(6)
]


def oracle_beats(card: str, target: str | None, classes: dict, own: str | None) -> bool:
    """§3 as written: never an eight; same rank; lower in suit; trump by class or own suit."""
    if card[0] == "8":
        return False
    if target is None or card[0] == target[0]:
        return True
    if card[1] == target[1]:
        return ORDER_OF_PLAY.index(card[0]) < ORDER_OF_PLAY.index(target[0])
    return classes[card[1]] > classes[target[1]] or card[1] == own


def oracle_moves(data: dict[str, Any]) -> set[tuple]:
    """§6.1: every move the seat to move may make, as (type, card or cards)."""
    seat = data["turn"]
    hand = data["hands"][seat]
    target = data["target"]["card"] if data["target"] else None
    own = data["trumps"]["personal"][seat]
    classes = data["trumps"]["common"]
    moves: set[tuple] = set()
    beat = False
    for card in hand:
        if oracle_beats(card, target, classes, own):
            beat = True
            moves.add(("lay", card))
        if card[0] == "8":
            moves.add(("lay", card))
    for rank in ORDER_OF_PLAY:
        four = [card for card in BANK_PACK if card[0] == rank]
        if all(card in hand for card in four):
            for top in four:
                moves.add(("quad", (*[card for card in four if card != top], top)))
    for suit in "CDHS":
        for low in range(6):
            run = tuple(rank + suit for rank in ORDER_OF_PLAY[low : low + 4])
            if all(card in hand for card in run):
                moves.update({("run", run), ("run", run[::-1])})
    if not beat:
        moves.add(("draw",) if data["stock"] and not data["drawn"] else ("pass",))
    return moves


@st.composite
def bank_positions(draw) -> dict[str, Any]:
    """A consistent Bank position in the middle of a deal, any trumps and sizes."""
    seats = draw(st.sampled_from([2, 3, 4]))
    options = get_game("bank").shapes.options
    mode = draw(st.sampled_from(options["trump_mode"]["enum"]))
    after_capture = draw(st.sampled_from(options["after_capture"]["enum"]))
    suits = draw(st.permutations("CDHS"))
    common = {
        "per_player": {}, "none": {}, "single": {suits[0]: 1},
        "double": {"D": 1, "S": 1}, "senior_junior": {"D": 1, "S": 2},
    }[mode]  # fmt: skip
    turn = draw(st.integers(0, seats - 1))
    # The seat to move often holds a quad or a run, which random hands seldom do.
    gift = draw(st.sampled_from([(), *QUAD_SETS, *RUN_SETS]))
    rest = [card for card in draw(st.permutations(BANK_PACK)) if card not in gift]
    hands = []
    for seat in range(seats):
        size = draw(st.integers(0 if seat == turn and gift else 1, 10 - len(gift)))
        hands.append(sort_cards([*(gift if seat == turn else ()), *rest[:size]]))
        rest = rest[size:]
    banked = draw(st.integers(0, min(5, len(rest) - 1)))
    bank = [{"card": card, "by": draw(st.integers(0, seats - 1))} for card in rest[:banked]]
    if bank and draw(st.booleans()):
        bank[0]["by"] = None
    rest = rest[banked:]
    stocked = draw(st.integers(0, len(rest) - 1))
    stock, piles = rest[:stocked], rest[stocked:]
    captured: list[list[str]] = [[] for _ in range(seats)]
    for card in piles:
        captured[draw(st.integers(0, seats - 1))].append(card)
    if bank:
        target = {"card": bank[-1]["card"], "by": bank[-1]["by"], "virtual": False}
    elif after_capture == "free_lead":
        target = None
    else:
        target = {"card": piles[0], "by": None, "virtual": True}
    return {
        "game": "bank",
        "rules": {"preset": "classic", "trump_mode": mode, "after_capture": after_capture},
        "seats": seats, "dealer": draw(st.integers(0, seats - 1)),
        "trumps": {"common": {suit: common.get(suit, 0) for suit in "CDHS"},
                   "personal": list(suits[:seats]) if mode == "per_player" else [None] * seats},
        "hands": hands, "stock": stock, "bank": bank, "target": target,
        "turn": turn, "drawn": draw(st.booleans()), "out": [],
        "captured": [sort_cards(pile) for pile in captured], "idle": 0, "starter": 0,
        "scores": [0] * seats, "deal": 1, "status": "playing", "winner": None, "winners": [],
        "tiebreak": None,
    }  # fmt: skip


def move_key(move: dict[str, Any]) -> tuple:
    if "cards" in move:
        return move["type"], tuple(move["cards"])
    return (move["type"], move["card"]) if "card" in move else (move["type"],)


@settings(max_examples=300, deadline=None)
@given(bank_positions())
def test_bank_legal_moves_match_the_rules_oracle(data: dict[str, Any]) -> None:
    game = get_game("bank")
    state = game.read(data)
    listed = [move_key(game.write_move(state, move)) for move in game.legal_moves(state)]
    assert len(listed) == len(set(listed))
    assert set(listed) == oracle_moves(data)
