"""The house rule `any_family` lists every cover: a big table must neither stall the
engine nor stop play (named captures are checked without listing)."""

import pytest

from engine.basra import MoveError, Rules, apply, legal_moves, new_game
from engine.basra.cards import VALUE
from engine.basra.moves import ANY_FAMILY_CANDIDATES
from engine.bots import hint
from engine.errors import TooLarge
from engine.game import get_game

HOUSE = {"forced_capture": False, "capture_policy": "any_family", "seven_diamonds_mode": "plain"}


@pytest.fixture(scope="module")
def crowding():
    """Lay every card (legal without forced capture) until listing is refused: the last
    state whose moves list, and the first whose moves do not."""
    state = listed = new_game(Rules.from_json({"preset": "levantine", **HOUSE}), 2, "crowded")
    while True:
        try:
            moves = legal_moves(state)
        except TooLarge:
            return listed, state
        listed = state
        state, _ = apply(state, next(move for move in moves if not move.capture))


@pytest.fixture(scope="module")
def crowded(crowding):
    return crowding[1]


def test_listing_a_huge_any_family_table_is_refused_naming_the_table(crowded):
    with pytest.raises(TooLarge) as refused:
        legal_moves(crowded)
    assert refused.value.path == "table"
    assert str(ANY_FAMILY_CANDIDATES) in refused.value.reason


def test_a_named_capture_still_applies_on_a_huge_table(crowded):
    hand, table = crowded.hands[crowded.turn], crowded.table
    played = next(
        (card, (a, b))
        for card in hand
        for a in table
        for b in table
        if a < b and VALUE[card] and VALUE[a] and VALUE[b] and VALUE[a] + VALUE[b] == VALUE[card]
    )
    card, pair = played
    after, events = apply(crowded, {"card": card, "capture": list(pair)})
    assert set(pair).isdisjoint(after.table)
    assert events[1]["type"] == "capture"


def test_an_illegal_named_capture_is_refused_and_a_lay_accepted(crowded):
    card = crowded.hands[crowded.turn][0]
    lone = next(other for other in crowded.table if VALUE[other] and VALUE[other] != VALUE[card])
    with pytest.raises(MoveError, match=f"{card} cannot take {lone}"):
        apply(crowded, {"card": card, "capture": [lone]})
    after, _ = apply(crowded, {"card": card, "capture": []})
    assert after.table[-1] == card


def test_the_expert_plays_on_a_table_its_sampled_hands_could_not_list(crowding):
    # The mover's ace lists its moves; a ten dealt to the other hand in a playout could not.
    listed = crowding[0]
    game = get_game("basra")
    move, weighed = hint(game, listed, "expert", "crowded")
    assert move in game.legal_moves(listed)
    assert [option for option, _ in weighed] == game.legal_moves(listed)


@pytest.mark.parametrize("level", ["random", "greedy", "expert"])
def test_every_level_plays_on_a_table_whose_moves_are_too_many_to_list(crowded, level):
    """A hosted bot (or a timeout) to move there raised TooLarge inside the server's play:
    the bots choose among the moves Basra offers for that (`playable_moves`), each legal."""
    game = get_game("basra")
    move, weighed = hint(game, crowded, level, "crowded")
    assert weighed and move in [option for option, _ in weighed]
    for option, _ in weighed:
        assert game.read_move(crowded, game.write_move(crowded, option)) == option
    after, _ = game.apply(crowded, move)
    assert game.to_move(after) != crowded.turn
