"""Engine speed: `python -m bench.engine`.

Prints, for Basra, legal-move lists per second on a fixed corpus of typical positions, the
worst time for one capture search on a table of 20 numerals and complete random rounds per
second on one core; for Bank, legal-move lists per second on its own corpus and complete
random deals per second; and the process's peak memory. Targets: >= 50,000 lists/s for
each game, <= 5 ms worst case, >= 1,000 Basra rounds/s.
"""

import argparse
import random
import resource
import time
from collections.abc import Callable

from engine import bank
from engine.bank.moves import beaters
from engine.basra import PRESETS, State, apply, covers, legal_moves, new_game
from engine.basra.moves import sum_captures

NUMERALS = "A23456789T"


def corpus(games: int) -> list[State]:
    """Every position of the first round of seeded random games, both presets, 2 and 4 seats."""
    positions = []
    for game in range(games):
        rng = random.Random(game)
        preset = ("levantine", "egyptian")[game % 2]
        state = new_game(PRESETS[preset], (2, 4)[game % 3 == 0], f"corpus-{game}")
        while state.round == 1:
            positions.append(state)
            state, _ = apply(state, rng.choice(legal_moves(state)))
    return positions


def clear_caches() -> None:
    covers.largest_covers.cache_clear()
    covers.every_cover.cache_clear()
    sum_captures.cache_clear()


def rate(work: Callable[[], int]) -> float:
    start = time.perf_counter()
    done = work()
    return done / (time.perf_counter() - start)


def list_rate(positions: list[State]) -> float:
    def work() -> int:
        for state in positions:
            legal_moves(state)
        return len(positions)

    return rate(work)


def table_of(counts: list[int]) -> tuple[str, ...]:
    return tuple(NUMERALS[value] + suit for value, n in enumerate(counts) for suit in "CDHS"[:n])


def worst_search(samples: int) -> tuple[float, tuple[str, ...], int]:
    """Slowest capture search, caches cleared, over random 20-numeral tables and every
    played value, plus the slowest table an adversarial hill-climb found (counts of A..T)."""
    rng = random.Random(20)
    pack = [rank + suit for rank in NUMERALS for suit in "CDHS"]
    tables = [tuple(rng.sample(pack, 20)) for _ in range(samples)]
    tables.append(table_of([4, 3, 3, 3, 4, 1, 2, 0, 0, 0]))
    worst = (0.0, (), 0)
    for table in tables:
        for value in range(1, 11):
            clear_caches()
            start = time.perf_counter()
            sum_captures(value, table, "max_cards")
            worst = max(worst, (time.perf_counter() - start, table, value))
    return worst


def round_rate(rounds: int) -> float:
    """Whole levantine 2-seat rounds with a uniform random mover, from the deal to the
    banked score."""

    def work() -> int:
        rng = random.Random(7)
        for number in range(rounds):
            state = new_game(PRESETS["levantine"], 2, f"round-{number}")
            while state.round == 1:
                state, _ = apply(state, rng.choice(legal_moves(state)))
        return rounds

    return rate(work)


# Bank's corpus cycles through the trump modes and the capture options, 2 to 4 seats.
BANK_RULES = [
    bank.Rules(trump_mode=mode, after_capture=capture)
    for mode in ("per_player", "none", "single", "double", "senior_junior")
    for capture in ("virtual_target", "free_lead", "turn_up")
]


def bank_corpus(games: int) -> list[bank.State]:
    """Every position of the first deal of seeded random Bank games."""
    positions = []
    for game in range(games):
        rng = random.Random(game)
        rules = BANK_RULES[game % len(BANK_RULES)]
        state = bank.new_game(rules, 2 + game % 3, f"corpus-{game}")
        while state.deal == 1 and state.turn is not None:
            positions.append(state)
            state, _ = bank.apply(state, rng.choice(bank.legal_moves(state)))
    return positions


def bank_list_rate(positions: list[bank.State]) -> float:
    def work() -> int:
        for state in positions:
            bank.legal_moves(state)
        return len(positions)

    return rate(work)


def bank_deal_rate(deals: int) -> float:
    """Whole classic 3-seat Bank deals with a uniform random mover, from the deal to the
    banked score."""

    def work() -> int:
        rng = random.Random(7)
        for number in range(deals):
            state = bank.new_game(bank.PRESETS["classic"], 3, f"deal-{number}")
            while state.deal == 1 and state.turn is not None:
                state, _ = bank.apply(state, rng.choice(bank.legal_moves(state)))
        return deals

    return rate(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="games in the position corpus")
    parser.add_argument("--rounds", type=int, default=2000, help="random rounds to time")
    parser.add_argument("--tables", type=int, default=300, help="random 20-numeral tables")
    parser.add_argument("--bank-games", type=int, default=300, help="games in Bank's corpus")
    parser.add_argument("--bank-deals", type=int, default=2000, help="random Bank deals to time")
    args = parser.parse_args()

    positions = corpus(args.games)
    clear_caches()
    cold = list_rate(positions)
    warm = max(list_rate(positions) for _ in range(3))
    print(f"legal-move lists/s  {cold:>10,.0f} first pass, {warm:,.0f} repeated "
          f"({len(positions):,} positions)  target >= 50,000")  # fmt: skip
    seconds, table, value = worst_search(args.tables)
    print(f"worst capture search {seconds * 1000:>9.2f} ms  (value {value} on {' '.join(table)})"
          f"  target <= 5 ms")  # fmt: skip
    clear_caches()
    print(f"random rounds/s     {round_rate(args.rounds):>10,.0f}  target >= 1,000")
    positions = bank_corpus(args.bank_games)
    beaters.cache_clear()
    cold = bank_list_rate(positions)
    warm = max(bank_list_rate(positions) for _ in range(3))
    print(f"bank lists/s        {cold:>10,.0f} first pass, {warm:,.0f} repeated "
          f"({len(positions):,} positions)  target >= 50,000")  # fmt: skip
    print(f"bank random deals/s {bank_deal_rate(args.bank_deals):>10,.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory         {peak:>10.1f} MiB (process RSS)")


if __name__ == "__main__":
    main()
