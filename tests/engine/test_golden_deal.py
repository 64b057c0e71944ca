"""Golden deals: the shuffle is SHA-256 based, so a seed deals the same cards on every
machine and Python version. These values were taken from the engine and must never move."""

from itertools import islice

from engine.basra import PRESETS, apply, legal_moves, new_game
from engine.basra.play import shuffled_deck
from engine.cards import fisher_yates, leading_words, random_words
from tests.engine.builders import cards

ACCEPTANCE_DECK = cards(
    "JD QC 2C 5H 2D TH 9C 4C 6D 7D QS 3S AC 4D KD JC TC 6H 9D QH 2H 2S AD 5S 5C KH TS 5D "
    "8H 7S 9H 9S 8D TD 3D KC 4S KS 3C AH 6C 7H 7C 8S 4H JS AS 8C QD 6S 3H JH"
)


def test_the_acceptance_shuffle() -> None:
    assert list(shuffled_deck("acceptance", 1)) == ACCEPTANCE_DECK


def test_the_first_levantine_deal_of_seed_acceptance() -> None:
    state = new_game(PRESETS["levantine"], 2, "acceptance")
    assert (state.dealer, state.turn, state.round) == (1, 0, 1)
    assert state.hands == (("2C", "9C", "2D", "JD"), ("4C", "QC", "5H", "TH"))
    # The 7D turned up fifth goes to the bottom of the stock (§3.2).
    assert state.table == ("6D", "QS", "3S", "AC")
    assert list(state.stock) == cards(
        "4D KD JC TC 6H 9D QH 2H 2S AD 5S 5C KH TS 5D 8H 7S 9H 9S 8D TD 3D KC 4S KS 3C AH "
        "6C 7H 7C 8S 4H JS AS 8C QD 6S 3H JH 7D"
    )


def test_the_first_egyptian_four_seat_deal_of_seed_acceptance() -> None:
    state = new_game(PRESETS["egyptian"], 4, "acceptance")
    assert (state.dealer, state.turn) == (3, 0)
    assert state.hands == (
        ("AC", "2D", "6D", "JD"),
        ("QC", "4D", "7D", "TH"),
        ("2C", "9C", "KD", "QS"),
        ("4C", "JC", "5H", "3S"),
    )
    assert state.table == ("TC", "6H", "9D", "QH")
    assert len(state.stock) == 32 and state.stock[0] == "2H" and state.stock[-1] == "JH"


def test_later_rounds_shuffle_from_the_seed_and_round_number() -> None:
    assert list(shuffled_deck("acceptance", 2)) == cards(
        "QH 9H 2D TS KS 9D 4H 8S AH 5S AC JH 3H KD JS 2H JD 2C 4S 7C 4D 6D TH JC 8C TC QC 5C "
        "3S 8D 7H QD 2S 9S KH AS 7S TD 7D AD 5D 3D 6S 8H 4C 3C KC QS 6C 5H 9C 6H"
    )
    state = new_game(PRESETS["levantine"], 2, "acceptance")
    while state.round == 1:
        state, _ = apply(state, legal_moves(state)[0])
    # Round 2: dealer 0, so seat 1 is dealt the first, third, fifth and seventh card.
    assert state.hands == (("9D", "9H", "8S", "TS"), ("2D", "4H", "QH", "KS"))
    assert state.table == ("AH", "5S", "AC", "3H")


def test_the_batched_words_are_the_random_words() -> None:
    for count in range(60):
        expected = list(islice(random_words(b"golden"), count + 9))
        assert list(islice(leading_words(b"golden", count), count + 9)) == expected


def test_a_rejected_word_is_replaced_by_the_next_one() -> None:
    # Words at or above the limit never come from SHA-256 in practice: fed by hand, the
    # shuffle must skip each and use the next, as the rejection sampling says.
    # 2**64 - 1 is rejected among 5 and among 3 (2**64 leaves 1 over either), not among 4.
    words = [2**64 - 1, 7, 8, 2**64 - 1, 4, 1]
    # Among 5: 7 picks 2 (A B E D C); among 4: 8 picks 0 (D B E A C); among 3: 4 picks 1
    # (D E B A C); among 2: 1 picks 1.
    assert fisher_yates(list("ABCDE"), iter(words)) == ("D", "E", "B", "A", "C")
