"""Computer players: legal, deterministic, blind to hidden cards, and stronger by level."""

import random
from argparse import Namespace

import pytest

from engine.bots import choose_move, hint
from engine.bots.arena import play_match, run, wilson
from engine.bots.expert import ITERATIONS, LISTED, PLAYOUTS, expert_player
from engine.game import get_game
from tests.engine.builders import LEVANTINE, build, cards, positions, single_play
from tests.engine.hidden import hidden_shuffle

GAME = get_game("basra")
CONFIGS = [(preset, seats) for preset in ("levantine", "egyptian") for seats in (2, 4)]


def test_random_level_depends_on_its_seed() -> None:
    state = single_play(LEVANTINE, cards("KS"), cards("2H 3H 4H 5H"))
    chosen = {choose_move(GAME, state, "random", str(seed)).card for seed in range(40)}
    assert chosen == {"2H", "3H", "4H", "5H"}


def test_determinize_keeps_what_the_seat_knows() -> None:
    for state in positions("levantine", 4, 8, "determinize"):
        seat = GAME.to_move(state)
        world = GAME.determinize(state, seat, random.Random(7))
        assert GAME.view(world, seat) == GAME.view(state, seat)
        assert GAME.write(GAME.read(GAME.write(world))) == GAME.write(world)
        other = hidden_shuffle(state, seat, random.Random(3))
        assert GAME.determinize(other, seat, random.Random(7)) == world


def test_determinize_deals_the_unseen_cards_anew() -> None:
    state = positions("levantine", 2, 1, "anew")[0]
    seat = GAME.to_move(state)
    worlds = {GAME.determinize(state, seat, random.Random(seed)).stock for seed in range(5)}
    assert len(worlds) == 5


def test_greedy_takes_the_basra() -> None:
    # 5H takes 2S 3S (2 cards, no basra); 9C clears 4D 5D... only with the 2S 3S left over.
    state = single_play(LEVANTINE, cards("4D 5C"), cards("9C 5H KS"))
    move, alternatives = hint(GAME, state, "greedy", "g")
    assert (move.card, move.basra) == ("9C", True)
    assert dict((m.card, v) for m, v in alternatives)["9C"] == 10.0


def test_greedy_takes_most_cards_then_scoring_cards() -> None:
    state = single_play(LEVANTINE, cards("3S 4S 7C KH"), cards("7H 3D QS"))
    assert choose_move(GAME, state, "greedy", "g") == GAME.read_move(
        state, {"card": "7H", "capture": ["7C", "3S", "4S"]}
    )
    state = single_play(LEVANTINE, cards("KH QH"), cards("TD 2C AS 6S"))
    assert choose_move(GAME, state, "greedy", "g").card == "6S"


def test_greedy_keeps_its_jack_when_a_numeral_takes_as_much() -> None:
    state = single_play(LEVANTINE, cards("5S"), cards("JH 5H 9C"))
    assert choose_move(GAME, state, "greedy", "g").card == "5H"


def test_expert_avoids_leaving_a_basra() -> None:
    # An empty table: whichever card is laid lies alone, a basra for its rank. Three of
    # the ten unseen cards are nines and none is a four, so the 9 is bait, the 4 is safe.
    state = build(
        LEVANTINE,
        hands=[cards("4H 9S"), cards("QS KS")],
        table=(),
        dealer=1,
        turn=0,
        stock=cards("9C 9D 9H AC 3C 5C 6C 8C"),
    )
    move, alternatives = hint(GAME, state, "expert", "x")
    assert move.card == "4H"
    values = {m.card: v for m, v in alternatives}
    assert values["4H"] > values["9S"]


def test_wilson_interval() -> None:
    low, high = wilson(240, 400)
    assert low == pytest.approx(0.5511, abs=1e-3)
    assert high == pytest.approx(0.6472, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0


def test_arena_match_is_reproducible() -> None:
    first = play_match("basra", "greedy", "random", "levantine", 2, "repro", 3)
    again = play_match("basra", "greedy", "random", "levantine", 2, "repro", 3)
    assert (first.a_won, first.plies, first.points) == (again.a_won, again.plies, again.points)
    assert first.plies >= 1
    assert len(first.times["a"]) == len(again.times["a"]) > 0


def arena(a: str, b: str, matches: int, seed: str) -> float:
    args = Namespace(
        game="basra", a=a, b=b, matches=matches, preset="levantine", seats=2, jobs=1, seed=seed
    )
    tally = run(args)
    assert tally.matches == matches
    return tally.a_wins / matches


def test_greedy_beats_random() -> None:
    assert arena("greedy", "random", 40, "greedy-random") >= 0.75


def test_expert_beats_random() -> None:
    assert arena("expert", "random", 6, "expert-random") >= 5 / 6


def test_expert_time_budget_still_decides() -> None:
    state = positions("levantine", 2, 1, "budget")[0]
    move, alternatives = expert_player(GAME, state, "t", iterations=1000, seconds=0.0)
    assert move in GAME.legal_moves(state)
    assert len(alternatives) == len(GAME.legal_moves(state))
    assert expert_player(GAME, state, "t", iterations=1) == expert_player(
        GAME, state, "t", iterations=1000, seconds=0.0
    )


class Alone:
    """The least a game of one seat (a patience) offers the protocol: the state is the total
    said so far, each move adds 1 or 2, and the match ends at 3. One side: no other to beat."""

    name, search = "alone", None

    def to_move(self, state: int) -> int | None:
        return 0 if state < 3 else None

    def legal_moves(self, state: int) -> list[int]:
        return [step for step in (1, 2) if state + step <= 3]

    def apply(self, state: int, move: int) -> tuple[int, list]:
        return state + move, []

    def side_of(self, state: int, seat: int) -> int:
        return seat

    def standing(self, state: int) -> list[float]:
        return [float(state)]

    def determinize(self, state: int, seat: int, rng: random.Random) -> int:
        return state


@pytest.mark.parametrize("level", ["random", "greedy", "expert"])
def test_every_level_plays_a_game_of_one_seat(level) -> None:
    move, weighed = hint(Alone(), 0, level, "alone")  # type: ignore[arg-type]
    assert move in (1, 2) and [option for option, _ in weighed] == [1, 2]
    if level == "greedy":
        assert move == 2  # its own points are what it has to gain


class Lucky(Alone):
    """A patience of one move with a hidden stock of numbers: draw the top one (worth its
    number) or stand (worth 2). The seat knows the numbers, not their order."""

    name = "lucky"

    def to_move(self, state: tuple) -> int | None:
        return 0 if state[1] is None else None

    def legal_moves(self, state: tuple) -> list[str]:
        return ["draw", "stand"]

    def apply(self, state: tuple, move: str) -> tuple[tuple, list]:  # type: ignore[override]
        stock, _ = state
        return (stock[1:], stock[0] if move == "draw" else 2), []

    def standing(self, state: tuple) -> list[float]:  # type: ignore[override]
        return [float(state[1] or 0)]

    def determinize(self, state: tuple, seat: int, rng: random.Random) -> tuple:  # type: ignore[override]
        stock = sorted(state[0])
        rng.shuffle(stock)
        return tuple(stock), state[1]


@pytest.mark.parametrize("level", ["random", "greedy", "expert"])
def test_generic_search_does_not_read_the_hidden_stock(level: str) -> None:
    # The same seat's view: the stock's order is hidden from it.
    high_first = hint(Lucky(), ((3, 1, 1), None), level, "lucky")  # type: ignore[arg-type]
    high_last = hint(Lucky(), ((1, 1, 3), None), level, "lucky")  # type: ignore[arg-type]
    assert high_first == high_last


class Counted:
    """Search knowledge that counts its playouts; every move is worth its own number."""

    def __init__(self) -> None:
        self.playouts = 0

    def move_value(self, state: int, move: int) -> tuple[float]:
        return (float(move),)

    def playout(self, state: int, move: int, seat: int, rng: random.Random, noise: float) -> float:
        self.playouts += 1
        return float(move)


class Crowded(Alone):
    """One decision among `moves` legal moves (as a Basra table under any_family can offer
    thousands), with search knowledge that counts its playouts."""

    name = "crowded"

    def __init__(self, moves: int) -> None:
        self.moves = moves
        self.search = Counted()

    def legal_moves(self, state: int) -> list[int]:
        return list(range(self.moves))


@pytest.mark.parametrize("moves", [3, 40, 2000])
def test_expert_spends_a_bounded_number_of_playouts(moves: int) -> None:
    game = Crowded(moves)
    move, weighed = expert_player(game, 0, "many")  # type: ignore[arg-type]
    assert move == moves - 1 and len(weighed) == moves
    playouts = game.search.playouts
    assert playouts % moves == 0  # whole iterations, every move in each
    assert playouts <= max(PLAYOUTS, moves)
    if moves * ITERATIONS <= PLAYOUTS:
        assert playouts == moves * ITERATIONS


class Wide(Alone):
    """A long patience of `moves` moves a ply and no search knowledge of its own (generic
    playouts), counting the moves it lists."""

    name = "wide"

    def __init__(self, moves: int) -> None:
        self.moves = moves
        self.listed = 0

    def to_move(self, state: int) -> int | None:
        return 0 if state < 1000 else None

    def legal_moves(self, state: int) -> list[int]:
        self.listed += self.moves
        return list(range(self.moves))

    def apply(self, state: int, move: int) -> tuple[int, list]:
        return state + 1, []


@pytest.mark.parametrize("moves", [2, 3000])
def test_generic_playouts_list_a_bounded_number_of_moves(moves: int) -> None:
    """Each ply of a generic playout lists the mover's moves: among 3000 moves a decision
    played 3000 playouts of 60 plies listing 3000 moves each (80 s of CPU in a hint)."""
    game = Wide(moves)
    move, weighed = expert_player(game, 0, "wide")  # type: ignore[arg-type]
    assert move in range(moves) and len(weighed) == moves
    assert game.listed <= LISTED + moves
    if moves == 2:  # a usual decision still plays its playouts to the horizon
        assert game.listed == moves + ITERATIONS * moves * 60 * moves
