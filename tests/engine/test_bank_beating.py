"""bank-rules.md §3's consequences, each checked over every pair of cards, every trump mode
and every seat's personal trump, through the legal moves of a position (a lay is listed
exactly when the card beats the target, or is an eight)."""

from itertools import permutations
from typing import Any

import pytest

from engine.game import get_game
from tests.engine.bank_builders import bank_state

GAME = get_game("bank")
PACK = [rank + suit for suit in "CDHS" for rank in "6789TJQKA"]
GAME_ORDER = "6789JQKTA"
MODES = [
    "none", "single H", "single C", "double", "senior_junior", "per_player H S", "per_player C D"
]
CLASSES = {
    "none": {}, "single H": {"H": 1}, "single C": {"C": 1}, "double": {"D": 1, "S": 1},
    "senior_junior": {"D": 1, "S": 2}, "per_player H S": {}, "per_player C D": {},
}  # fmt: skip


def lays(mode: str, target: str, seat: int = 0) -> set[str]:
    """The cards `seat` may lay on `target` (laid by the other seat) holding every other
    card but one the other seat keeps: 2 seats, the rest in seat 1's pile."""
    other = 1 - seat
    spare = next(card for card in PACK if card != target)
    hand = [card for card in PACK if card not in (target, spare)]
    data: dict[str, Any] = bank_state(
        2, hands={seat: " ".join(hand), other: spare}, bank=f"{target}/{other}",
        trumps=mode, turn=seat, rest_to=other,
    )  # fmt: skip
    state = GAME.read(data)
    return {
        move["card"]
        for move in (GAME.write_move(state, m) for m in GAME.legal_moves(state))
        if move["type"] == "lay"
    }


def beaten(mode: str) -> dict[tuple[str, str, int], bool]:
    """(card, target, seat) -> whether seat may lay card singly on target; the two cards
    the position cannot show (the target itself, the other seat's card) left out."""
    table = {}
    for seat in (0, 1):
        for target in PACK:
            spare = next(card for card in PACK if card != target)
            laid = lays(mode, target, seat)
            for card in PACK:
                if card not in (target, spare):
                    table[card, target, seat] = card in laid
    return table


@pytest.fixture(scope="module", params=MODES)
def table(request) -> tuple[str, dict[tuple[str, str, int], bool]]:
    return request.param, beaten(request.param)


def own_trump(mode: str, seat: int) -> str | None:
    parts = mode.split()
    return parts[1 + seat] if parts[0] == "per_player" else None


def test_eights_are_always_playable_and_never_beats(table) -> None:
    """§6.1 and §7.1: an eight is always listed; it is never a beat (so it never blocks a
    draw or a pass: see the reference tests)."""
    _, beats = table
    assert all(beats[key] for key in beats if key[0][0] == "8")


def test_two_cards_of_one_rank_always_beat_each_other(table) -> None:
    _, beats = table
    assert all(beats[key] for key in beats if key[0][0] == key[1][0])


def test_in_one_suit_a_lower_card_beats_and_a_higher_one_never(table) -> None:
    mode, beats = table
    for (card, target, _seat), beat in beats.items():
        if card[1] == target[1] and card[0] != "8":
            assert beat == (GAME_ORDER.index(card[0]) < GAME_ORDER.index(target[0])), (
                mode, card, target
            )


def test_another_suit_beats_only_by_rank_or_as_a_higher_class_or_own_trump(table) -> None:
    mode, beats = table
    classes = CLASSES[mode]
    for (card, target, seat), beat in beats.items():
        if card[1] != target[1] and card[0] not in ("8", target[0]):
            trump = classes.get(card[1], 0) > classes.get(target[1], 0)
            assert beat == (trump or card[1] == own_trump(mode, seat)), (mode, card, target, seat)


def test_a_six_falls_only_to_a_six_or_a_trump(table) -> None:
    mode, beats = table
    classes = CLASSES[mode]
    for (card, target, seat), beat in beats.items():
        if target[0] == "6" and card[0] not in ("6", "8") and beat:
            assert card[1] != target[1]
            assert (
                classes.get(card[1], 0) > classes.get(target[1], 0)
                or card[1] == own_trump(mode, seat)
            )


def test_equal_classes_never_beat_each_other_by_class(table) -> None:
    mode, beats = table
    classes = CLASSES[mode]
    for first, second in permutations("CDHS", 2):
        if classes.get(first, 0) != classes.get(second, 0):
            continue
        for seat in (0, 1):
            if own_trump(mode, seat) == first:
                continue
            # a nine never beats a seven of another suit of its class
            assert not beats["9" + first, "7" + second, seat], (mode, first, second)


def test_per_player_is_asymmetric() -> None:
    """For the seat whose trump is H any heart beats any other suit, the other seat's
    trump included; for the other seat a heart is just a heart."""
    beats = beaten("per_player H S")
    for (card, target, seat), beat in beats.items():
        if card[1] == "H" and target[1] != "H" and card[0] != "8":
            assert beat == (seat == 0 or card[0] == target[0]), (card, target, seat)
