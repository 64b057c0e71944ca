"""The sum-capture search of spec §5.1 over value counts.

Table numerals of equal value are interchangeable for the size of a cover, so the
search runs on a count vector (how many table cards of each value) and only the
winning vectors are expanded into concrete card sets. A vector is an int with one
4-bit field per value: three bits of count (at most 4 of a value in one pack) and
a guard bit that survives a subtraction exactly when every count stays >= 0.
"""

from functools import cache
from itertools import combinations, product
from typing import Final

FIELD: Final = 4
GUARDS: Final = sum(8 << (FIELD * value) for value in range(11))


def unit(value: int) -> int:
    return 1 << (FIELD * value)


def count_of(vector: int, value: int) -> int:
    return (vector >> (FIELD * value)) & 7


def field(value: int) -> int:
    """The three count bits of `value`'s field."""
    return 7 << (FIELD * value)


# The lowest bit of every field.
ONES: Final = sum(unit(value) for value in range(11))


def takes_whole(used: int, vector: int) -> bool:
    """Whether `used` takes every card of `vector` of each value it takes any of."""
    taken = (used | used >> 1 | used >> 2) & ONES  # a field's lowest bit, where used counts
    return vector & (taken * 7) == used


def fits(part: int, vector: int) -> bool:
    return ((vector | GUARDS) - part) & GUARDS == GUARDS


def _partitions(total: int, largest: int) -> list[list[int]]:
    if total == 0:
        return [[]]
    return [
        [part, *rest]
        for part in range(min(total, largest), 0, -1)
        for rest in _partitions(total - part, part)
    ]


@cache
def groups_by_highest(target: int, largest: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every group summing to `target` from values <= `largest`, as (vector, size),
    indexed by the group's highest value."""
    index: list[list[tuple[int, int]]] = [[] for _ in range(largest + 1)]
    for parts in _partitions(target, largest):
        if max(parts.count(part) for part in parts) > 4:
            continue  # one pack holds four cards of a value
        index[max(parts)].append((sum(unit(part) for part in parts), len(parts)))
    return tuple(tuple(groups) for groups in index)


def _highest_value(vector: int) -> int:
    return (vector.bit_length() - 1) // FIELD


@cache
def largest_covers(target: int, vector: int) -> tuple[int, frozenset[int]]:
    """The largest cover size of groups summing to `target` inside `vector` (values
    below `target` only), and every used-count vector that reaches it.

    Decides the highest remaining card: leave it out, or put it in a group whose
    highest value it is. High cards fit few groups, so this branches least."""
    if vector == 0:
        return 0, frozenset((0,))
    highest = _highest_value(vector)
    best, used = largest_covers(target, vector - unit(highest))
    winners = set(used)
    for group, size in groups_by_highest(target, target - 1)[highest]:
        if fits(group, vector):
            found, rest = largest_covers(target, vector - group)
            found += size
            if found > best:
                best, winners = found, {group + other for other in rest}
            elif found == best:
                winners.update(group + other for other in rest)
    return best, frozenset(winners)


@cache
def every_cover(target: int, vector: int) -> frozenset[int]:
    """Every used-count vector of a family of disjoint groups (`any_family`),
    the card's own value included as a group of one."""
    if vector == 0:
        return frozenset((0,))
    highest = _highest_value(vector)
    found = set(every_cover(target, vector - unit(highest)))
    for group, _ in groups_by_highest(target, target)[highest]:
        if fits(group, vector):
            found.update(group + other for other in every_cover(target, vector - group))
    return frozenset(found)


def splits_into(vector: int, target: int) -> bool:
    """Whether every card in `vector` goes into disjoint groups summing to `target`."""
    if vector >> (FIELD * (target + 1)):
        return False
    cards = sum(count_of(vector, value) for value in range(1, 11))
    lower = vector & (unit(target) - 1)
    return count_of(vector, target) + largest_covers(target, lower)[0] == cards


def splits_evenly(vector: int, total: int) -> bool:
    """Whether the numerals in `vector` split into disjoint groups of one common sum
    between 1 and 10 (the wild seven of diamonds, spec §6.3)."""
    highest = max(value for value in range(1, 11) if count_of(vector, value))
    return any(splits_into(vector, target) for target in range(highest, 11) if total % target == 0)


def expand(used: int, by_value: dict[int, list[str]]) -> list[tuple[str, ...]]:
    """The concrete card sets behind one used-count vector."""
    choices = [
        combinations(cards, count_of(used, value))
        for value, cards in by_value.items()
        if count_of(used, value)
    ]
    return [sum(picked, ()) for picked in product(*choices)]
