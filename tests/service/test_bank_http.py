"""A sample of the worked Bank cases through the stateless HTTP endpoints (Flask's test
client): the same positions as tests/engine/test_bank_cases.py, sent and answered as JSON."""

import json
from typing import Any

from tests.engine.bank_builders import (
    assert_events,
    assert_fresh_deal,
    bank_state,
    capture,
    deal_event,
    draw,
    entries,
    lay,
    move_json,
    move_key,
    passed,
    quad,
    side,
    sides_of,
    trumps_of,
    went_out,
)


def post(client, action: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/v1/games/bank/{action}", json=body)
    assert response.status_code == 200, response.get_json()
    assert response.content_type == "application/json"
    return response.get_json()


def rejected(client, action: str, body: dict[str, Any]) -> dict[str, list[str]]:
    """The 422 problem's errors, by field path."""
    response = client.post(f"/v1/games/bank/{action}", json=body)
    assert response.status_code == 422, response.get_json()
    assert response.content_type == "application/problem+json"
    errors = response.get_json()["errors"]
    assert all(isinstance(text, str) and text for texts in errors.values() for text in texts)
    return errors


def assert_legal(client, state: dict[str, Any], *moves: str) -> None:
    listed = [move_key(move) for move in post(client, "legal-moves", {"state": state})["moves"]]
    assert len(listed) == len(set(listed)), listed
    assert set(listed) == {move_key(move_json(move)) for move in moves}


def apply(client, state: dict[str, Any], move: str) -> tuple[dict[str, Any], list[dict]]:
    answer = post(client, "apply", {"state": state, "move": move_json(move)})
    return answer["state"], answer["events"]


def b18() -> dict[str, Any]:
    return bank_state(
        2, trumps="per_player D S", bank="KH/P QH/0 AS/1", hands={0: "KC 9H", 1: "6S TD 8C"},
        stock="7C 8S",
    )  # fmt: skip


def b50(scores: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    return bank_state(
        2, trumps="per_player H S", dealer=0, starter=1, bank="JD/P QC/1",
        hands={0: "9C", 1: "AS TD 7H"}, captured={0: "AC KC", 1: "QS JS"}, scores=scores,
    )  # fmt: skip


def test_b01_legal_moves_over_http(client):
    state = bank_state(2, bank="TS/P", hands={0: "JS AS 9H KS", 1: "7C 8C 9C JC"})
    assert_legal(client, state, "lay JS", "lay KS")
    errors = rejected(client, "apply", {"state": state, "move": move_json("lay AS")})
    assert any(path.startswith("move") for path in errors), errors


def test_b11_a_personal_trump_over_http(client):
    state = bank_state(2, trumps="per_player H S", bank="8D/P TS/1", hands={0: "6H AS JS QH"})
    assert_legal(client, state, "lay 6H", "lay QH", "lay JS")


def test_b13_draw_over_http_and_the_view_of_each_seat(client):
    state = bank_state(2, bank="9S/P 6S/1", hands={0: "7C 8D 9H"}, stock="KC")
    assert_legal(client, state, "lay 8D", "draw")
    after, events = apply(client, state, "draw")
    assert_events(events, draw(0, "KC", forced=False))
    assert after["drawn"] is True and after["turn"] == 0
    assert_legal(client, after, "lay 8D", "pass")
    view = post(client, "view", {"state": after, "seat": 1})["view"]
    assert not {"hands", "stock", "seed"} & set(view)
    assert view["seat"] == 1 and view["hand_sizes"] == [4, 2]
    assert view["stock_size"] == len(after["stock"])
    assert sorted(view["hand"]) == sorted(after["hands"][1])
    assert '"KC"' not in json.dumps(view)


def test_b18_a_capture_on_a_pass_over_http(client):
    state, _ = apply(client, b18(), "draw")
    assert_legal(client, state, "pass")
    state, events = apply(client, state, "pass")
    assert_events(events, passed(0), capture(1, "KH QH AS", 20, "pass"))
    assert state["bank"] == [] and state["target"] == {"card": "AS", "by": None, "virtual": True}
    assert state["turn"] == 1 and state["idle"] == 1


def test_b29_a_quad_in_any_input_order_over_http(client):
    state = bank_state(2, bank="KD/P JD/1", hands={0: "QC QD QH QS 9D 6C", 1: "7H 8H"})
    state, events = apply(client, state, "quad QS QC QH QD")
    assert_events(events, quad(0, "QS QC QH QD"))
    assert state["bank"] == entries("KD/P JD/1 QS/0 QC/0 QH/0 QD/0")
    assert state["turn"] == 0
    assert_legal(client, state, "lay 9D")


def test_b43_a_trump_king_finish_over_http(client):
    state = bank_state(3, trumps="per_player H S C", bank="QD/P 9C/1", hands={0: "KH"})
    state, events = apply(client, state, "lay KH")
    assert_events(
        events, lay(0, "KH"), went_out(0, 1, "trump_king", 30),
        capture(0, "QD 9C KH", 8, "trump_king"),
    )  # fmt: skip
    assert state["turn"] == 1


def test_b50_the_deal_ends_and_the_next_is_dealt_over_http(client):
    state, events = apply(client, b50(), "lay 9C")
    ending = {
        "type": "deal_end", "deal": 1, "ending": "E1", "loser": 1, "penalty": 22,
        "discarded": ["JD", "QC", "9C"],
        "sides": [side(17, "plain", 1, 20), side(4, penalty=22)], "scores": [37, -18],
    }  # fmt: skip
    assert_events(events, lay(0, "9C"), went_out(0, 1, "plain", 20), ending, deal_event(state))
    trumps = trumps_of("per_player H S", 2)[1]
    assert_fresh_deal(state, deal=2, dealer=1, trumps=trumps, scores=[37, -18])


def test_b55_the_match_is_over_over_http(client):
    state, events = apply(client, b50(scores=(220, 100)), "lay 9C")
    assert events[-1] == {"type": "match_end", "winner": 0, "winners": [0], "scores": [257, 82]}
    assert state["status"] == "match_over" and state["turn"] is None
    assert post(client, "legal-moves", {"state": state})["moves"] == []
    breakdown = post(client, "score", {"state": state})["sides"]
    assert sides_of(breakdown) == [side(17, "plain", 1, 20), side(4, penalty=22)]
    errors = rejected(client, "apply", {"state": state, "move": {"type": "pass"}})
    assert any(path.startswith("move") for path in errors), errors


def test_b63_the_score_of_a_deal_in_play_over_http(client):
    state = bank_state(
        3, trumps="per_player D C H", out=[(2, "trump_king")], bank="JH/0", turn=1,
        hands={0: "9C 7D", 1: "8D"}, captured={0: "AS QS", 2: "TS 9S KH"},
    )  # fmt: skip
    breakdown = post(client, "score", {"state": state})["sides"]
    assert sides_of(breakdown) == [side(15), side(0), side(15, "trump_king", 1, 30)]


def test_an_inconsistent_case_state_is_a_422_naming_the_state(client):
    state = bank_state(2, bank="TS/P", hands={0: "JS AS 9H KS", 1: "7C 8C 9C JC"})
    state["stock"] = state["stock"][1:]
    errors = rejected(client, "legal-moves", {"state": state})
    assert all(path.startswith("state") for path in errors), errors
    errors = rejected(client, "view", {"state": bank_state(2, bank="TS/P", hands={0: "JS"}),
                                       "seat": 2})  # fmt: skip
    assert "seat" in errors, errors
