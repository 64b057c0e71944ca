"""Engine speed: `python -m bench.engine`, beside pure-Python card engines in one run.

Random playouts of whole matches through the game protocol (new, legal_moves, apply) of
every registered game, beside the pure-Python games of OpenSpiel (python_kuhn_poker,
python_block_dominoes) and of RLCard (Uno, Leduc and limit hold'em, through each game's
own init_game / get_legal_actions / step), and OpenSpiel's C++ hearts as a compiled
anchor, in short slices taken in turn and timed in CPU seconds of this process, so a load
that comes and goes on the machine weighs on each alike. Actions are the players'
decisions on both sides: the peers' chance actions (their deals) are applied and timed but
not counted, as our games deal inside apply. Target: every game >= 1.0 x the fastest
pure-Python peer of the run. Without the `bench` extra (`pip install -e '.[bench]'`) the
peers are reported missing and the targets skipped.

Then Basra's own figures: legal-move listings per second on a corpus of typical
positions and the p99 of one listing, the worst capture search on 20-numeral tables
(caches cleared) against twice the listing budget, and complete random rounds per second;
Bank's: legal-move listings per second on its own corpus (every trump mode and capture
option, 2 to 4 seats) and complete random deals per second.

The first line says which engine build was measured: pure Python, or how many of the
engine's modules run compiled (`make compiled`, docs/operations.md).
"""

import argparse
import importlib
import importlib.machinery
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import orjson

from bench.report import Target, print_targets
from engine import bank
from engine.bank.moves import beaters
from engine.basra import PRESETS, State, apply, legal_moves, new_game
from engine.basra.moves import clear_caches, sum_captures
from engine.game import Game, games

NUMERALS = "A23456789T"
SLICE_CPU_SECONDS = 0.25
# What one legal-move listing may take at the 99th percentile, in process: a tenth of the
# echo floor's p99 over HTTP at 16 connections (20-30 ms), so the engine is never what a
# client waits for. The worst capture search may take twice that.
LISTING_P99_BUDGET_MS = 2.5
PLAYOUT_GOAL = 1.0  # actions per CPU-second against the fastest pure-Python peer
SPIEL_PEERS = ("python_kuhn_poker", "python_block_dominoes")  # OpenSpiel's, in Python
COMPILED_PEER = "hearts"  # OpenSpiel's C++ hearts: the compiled build's goal, the pure one's anchor
# RLCard's card games that have the game-level API: name -> (module, class).
RLCARD_PEERS = {
    "rlcard uno": ("rlcard.games.uno.game", "UnoGame"),
    "rlcard leduc holdem": ("rlcard.games.leducholdem.game", "LeducholdemGame"),
    "rlcard limit holdem": ("rlcard.games.limitholdem.game", "LimitHoldemGame"),
}

# A playout source: each call plays one whole match and returns the actions it applied.
Playout = Callable[[], int]


def our_playouts(game: Game, seed: int = 7) -> Playout:
    """Whole matches of `game`'s default preset and fewest seats, a uniform random mover."""
    catalogue = game.catalogue()
    rules, seats = {"preset": catalogue["default_preset"]}, min(catalogue["seats"])
    rng, numbers = random.Random(seed), iter(range(1 << 62))

    def playout() -> int:
        state, actions = game.new(rules, seats, f"playout-{next(numbers)}"), 0
        while game.to_move(state) is not None:
            state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
            actions += 1
        return actions

    return playout


def peer_playouts(name: str, seed: int = 7) -> Playout | None:
    """Whole episodes of an OpenSpiel game, chance outcomes sampled by their probabilities
    (counted as no action); None when OpenSpiel is not installed."""
    try:
        import pyspiel
        from open_spiel.python import games as _registers_python_games  # noqa: F401
    except ImportError:
        return None
    spiel_game, rng = pyspiel.load_game(name), random.Random(seed)

    def playout() -> int:
        state, actions = spiel_game.new_initial_state(), 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                actions += 1
        return actions

    return playout


def rlcard_playouts(module: str, name: str, seed: int = 7) -> Playout | None:
    """Whole games of an RLCard card game through its game object (the deal in init_game,
    counted as no action); None when RLCard is not installed."""
    try:
        import numpy

        game = getattr(importlib.import_module(module), name)()
    except ImportError:
        return None
    game.np_random, rng = numpy.random.RandomState(seed), random.Random(seed)

    def playout() -> int:
        game.init_game()
        actions = 0
        while not game.is_over():
            game.step(rng.choice(game.get_legal_actions()))
            actions += 1
        return actions

    return playout


def actions_per_cpu_second(playouts: dict[str, Playout], seconds: float) -> dict[str, float]:
    """Each source for about `seconds` of CPU in all, in slices taken in turn."""
    actions, spent = dict.fromkeys(playouts, 0), dict.fromkeys(playouts, 0.0)
    for _ in range(max(1, round(seconds / SLICE_CPU_SECONDS))):
        for name, playout in playouts.items():
            started = time.process_time()
            while time.process_time() - started < SLICE_CPU_SECONDS:
                actions[name] += playout()
            spent[name] += time.process_time() - started
    return {name: actions[name] / spent[name] for name in playouts}


def corpus(games_played: int) -> list[State]:
    """Every position of the first round of seeded random games, both presets, 2 and 4 seats."""
    positions = []
    for number in range(games_played):
        rng = random.Random(number)
        preset = ("levantine", "egyptian")[number % 2]
        state = new_game(PRESETS[preset], (2, 4)[number % 3 == 0], f"corpus-{number}")
        while state.round == 1:
            positions.append(state)
            state, _ = apply(state, rng.choice(legal_moves(state)))
    return positions


def listing_times(positions: list[State]) -> list[float]:
    """CPU seconds for each listing, one pass over the corpus (CPU time, so that being
    descheduled on a busy machine does not count as the listing's own cost)."""
    times = []
    for state in positions:
        started = time.process_time()
        legal_moves(state)
        times.append(time.process_time() - started)
    return times


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def table_of(counts: list[int]) -> tuple[str, ...]:
    return tuple(NUMERALS[value] + suit for value, n in enumerate(counts) for suit in "CDHS"[:n])


def worst_search(samples: int) -> tuple[float, tuple[str, ...], int]:
    """Slowest capture search, caches cleared, over random 20-numeral tables and every
    played value, plus the slowest table an adversarial hill-climb found (counts of A..T);
    each the least CPU time of three tries."""
    rng = random.Random(20)
    pack = [rank + suit for rank in NUMERALS for suit in "CDHS"]
    tables = [tuple(rng.sample(pack, 20)) for _ in range(samples)]
    tables.append(table_of([4, 3, 3, 3, 4, 1, 2, 0, 0, 0]))
    worst = (0.0, (), 0)
    for table in tables:
        for value in range(1, 11):
            tries = []
            for _ in range(3):
                clear_caches()
                start = time.process_time()
                sum_captures(value, table, "max_cards")
                tries.append(time.process_time() - start)
            worst = max(worst, (min(tries), table, value))
    return worst


def round_rate(rounds: int) -> float:
    """Whole levantine 2-seat rounds with a uniform random mover, from the deal to the
    banked score, per wall-clock second."""
    rng = random.Random(7)
    started = time.perf_counter()
    for number in range(rounds):
        state = new_game(PRESETS["levantine"], 2, f"round-{number}")
        while state.round == 1:
            state, _ = apply(state, rng.choice(legal_moves(state)))
    return rounds / (time.perf_counter() - started)


# Bank's corpus cycles through the trump modes and the capture options, 2 to 4 seats.
BANK_RULES = [
    bank.Rules(trump_mode=mode, after_capture=capture)
    for mode in ("per_player", "none", "single", "double", "senior_junior")
    for capture in ("virtual_target", "free_lead", "turn_up")
]


def bank_corpus(games_played: int) -> list[bank.State]:
    """Every position of the first deal of seeded random Bank games."""
    positions = []
    for number in range(games_played):
        rng = random.Random(number)
        rules = BANK_RULES[number % len(BANK_RULES)]
        state = bank.new_game(rules, 2 + number % 3, f"corpus-{number}")
        while state.deal == 1 and state.turn is not None:
            positions.append(state)
            state, _ = bank.apply(state, rng.choice(bank.legal_moves(state)))
    return positions


def bank_list_rate(positions: list[bank.State]) -> float:
    started = time.perf_counter()
    for state in positions:
        bank.legal_moves(state)
    return len(positions) / (time.perf_counter() - started)


def bank_deal_rate(deals: int) -> float:
    """Whole classic 3-seat Bank deals with a uniform random mover, from the deal to the
    banked score, per wall-clock second."""
    rng = random.Random(7)
    started = time.perf_counter()
    for number in range(deals):
        state = bank.new_game(bank.PRESETS["classic"], 3, f"deal-{number}")
        while state.deal == 1 and state.turn is not None:
            state, _ = bank.apply(state, rng.choice(bank.legal_moves(state)))
    return deals / (time.perf_counter() - started)


def sources() -> Iterator[tuple[str, Playout | None]]:
    for name, game in sorted(games().items()):
        yield name, our_playouts(game)
    for name in SPIEL_PEERS:
        yield name, peer_playouts(name)
    for name, (module, game_class) in RLCARD_PEERS.items():
        yield name, rlcard_playouts(module, game_class)
    yield COMPILED_PEER, peer_playouts(COMPILED_PEER)


def engine_build() -> str:
    """Which build of the engine this process runs: `pure Python`, or how many of its
    modules loaded so far are compiled extensions (`make compiled`)."""
    modules = [
        module
        for name, module in sorted(sys.modules.items())
        if (name == "engine" or name.startswith("engine."))
        and not name.endswith("__mypyc")  # the compiled modules' shared library
        and getattr(module, "__file__", None)
    ]
    compiled = [
        module.__name__
        for module in modules
        if module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    ]
    if not compiled:
        return f"pure Python ({len(modules)} engine modules interpreted)"
    return f"compiled: {len(compiled)} of {len(modules)} engine modules are mypyc extensions"


def measure(seconds: float, games_played: int, tables: int, rounds: int) -> list[Target]:
    """Print the engine figures and return its targets."""
    found = dict(sources())
    build = engine_build()
    compiled = build.startswith("compiled")
    print(f"engine build: {build}")
    playouts = {name: playout for name, playout in found.items() if playout is not None}
    rates = actions_per_cpu_second(playouts, seconds)
    print(f"random playouts, whole matches, {seconds:g} CPU-s each in "
          f"{SLICE_CPU_SECONDS:g} s slices taken in turn:")  # fmt: skip
    for name, playout in found.items():
        figure = "missing: pip install -e '.[bench]'" if playout is None else (
            f"{rates[name]:>12,.0f} actions per CPU-second"
        )  # fmt: skip
        print(f"  {name:<24}{figure}")
    pure = {name: rates[name] for name in [*SPIEL_PEERS, *RLCARD_PEERS] if name in rates}
    fastest = max(pure, key=pure.__getitem__, default="pure-Python peers")
    # The pure engine's goal is the fastest pure-Python peer, with the C++ anchor beside it;
    # the compiled build's is the C++ anchor, with the pure-Python peer beside it.
    kind = "compiled playouts" if compiled else "playouts"
    targets = [
        target
        for name in sorted(games())
        for target in (
            Target(f"{name} {kind}", rates[name], "act/cpu-s", pure.get(fastest), fastest,
                   None if compiled else PLAYOUT_GOAL),
            Target(f"{name} {kind}, C++ anchor", rates[name], "act/cpu-s",
                   rates.get(COMPILED_PEER), f"{COMPILED_PEER} (C++)",
                   PLAYOUT_GOAL if compiled else None),
        )
    ]  # fmt: skip

    positions = corpus(games_played)
    clear_caches()
    cold = listing_times(positions)
    warm = min((listing_times(positions) for _ in range(3)), key=sum)
    p99_ms = percentile(cold, 0.99) * 1000
    print(f"\nlegal-move lists/s   {len(cold) / sum(cold):>9,.0f} first pass, "
          f"{len(warm) / sum(warm):,.0f} repeated ({len(positions):,} positions); one listing "
          f"p50 {statistics.median(cold) * 1e6:.1f} us, p99 {p99_ms * 1000:.1f} us first pass"
    )  # fmt: skip
    seconds_worst, table, value = worst_search(tables)
    print(f"worst capture search {seconds_worst * 1000:>9.2f} ms  (value {value} on "
          f"{' '.join(table)}), caches cleared")  # fmt: skip
    clear_caches()
    print(f"random rounds/s      {round_rate(rounds):>9,.0f}")
    bank_positions = bank_corpus(games_played)
    beaters.cache_clear()
    cold_rate = bank_list_rate(bank_positions)
    warm_rate = max(bank_list_rate(bank_positions) for _ in range(3))
    print(f"bank lists/s         {cold_rate:>9,.0f} first pass, {warm_rate:,.0f} repeated "
          f"({len(bank_positions):,} positions)")  # fmt: skip
    print(f"bank random deals/s  {bank_deal_rate(rounds):>9,.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory          {peak:>9.1f} MiB (process RSS)")
    targets += [
        Target("listing p99, first pass", p99_ms, "ms", LISTING_P99_BUDGET_MS,
               "listing p99 budget", 1.0, higher=False),
        Target("worst 20-numeral capture search", seconds_worst * 1000, "ms",
               LISTING_P99_BUDGET_MS, "listing p99 budget", 2.0, higher=False),
    ]  # fmt: skip
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="CPU-s of playouts each")
    parser.add_argument("--games", type=int, default=300, help="games in the position corpus")
    parser.add_argument("--rounds", type=int, default=1000, help="random rounds to time")
    parser.add_argument("--tables", type=int, default=300, help="random 20-numeral tables")
    parser.add_argument("--playouts-to", type=Path, metavar="FILE",
                        help="also write the playout targets to FILE as JSON")  # fmt: skip
    args = parser.parse_args()
    targets = measure(args.seconds, args.games, args.tables, args.rounds)
    print_targets(targets, "engine targets")
    if args.playouts_to is not None:
        playouts = [asdict(target) for target in targets if "playouts" in target.name]
        args.playouts_to.write_bytes(orjson.dumps(playouts))


if __name__ == "__main__":
    main()
