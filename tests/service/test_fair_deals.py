"""Fair deals in hosted sessions: with two or more human seats only the server's secret seed
deals (a client's seed would tell its chooser every hand); the answer commits to the seed
(its SHA-256) at creation and reveals it when the match ends, and re-dealing with it gives
the very cards every seat was dealt."""

import hashlib

import pytest

from service import create_app

HUMANS = [{"type": "human"}, {"type": "human"}]
VERSUS_BOT = [{"type": "human"}, {"type": "bot", "level": "random"}]
SHORT = {"preset": "levantine", "target_score": 1}  # a match of one round


def create(client, seats, **extra):
    return client.post("/v1/sessions", json={"game": "basra", "seats": seats, **extra})


def seat_headers(created: dict) -> list[dict[str, str]]:
    return [{"Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]
            if "token" in seat]  # fmt: skip


@pytest.mark.parametrize("seed", ["mine", "", "x" * 128])
def test_a_client_seed_gives_way_to_a_secret_one_when_two_seats_are_human(client, seed):
    """Accepted as the contract has it, but not dealt from: each such session deals anew."""
    answers = [create(client, HUMANS, seed=seed) for _ in range(2)]
    assert [answer.status_code for answer in answers] == [201, 201]
    commitments = {answer.get_json()["deal"]["commitment"] for answer in answers}
    assert len(commitments) == 2
    assert hashlib.sha256(seed.encode()).hexdigest() not in commitments


def test_a_seed_too_long_is_refused_naming_it_whatever_the_seats(client):
    for seats in (HUMANS, VERSUS_BOT):
        answer = create(client, seats, seed="x" * 129)
        assert answer.status_code == 422 and list(answer.get_json()["errors"]) == ["seed"]


def test_a_client_seed_is_kept_when_only_one_seat_is_human(client):
    answer = create(client, VERSUS_BOT, seed="practice")
    assert answer.status_code == 201
    commitment = answer.get_json()["deal"]["commitment"]
    assert commitment == hashlib.sha256(b"practice").hexdigest()


def test_client_seeds_may_be_allowed_for_tests_and_replays():
    allowed = create_app({"REDIS_URL": None, "CLIENT_SEEDS": True}).test_client()
    answer = create(allowed, HUMANS, seed="replay")
    assert answer.status_code == 201
    assert answer.get_json()["deal"] == {"commitment": hashlib.sha256(b"replay").hexdigest()}


def test_the_seed_is_committed_at_creation_and_revealed_at_the_end(client):
    created = create(client, HUMANS, rules=SHORT).get_json()
    commitment = created["deal"]["commitment"]
    assert set(created["deal"]) == {"commitment"}
    url = f"/v1/sessions/{created['id']}"
    headers = seat_headers(created)
    dealt = [client.get(url, headers=h).get_json()["view"] for h in headers]
    received = []
    for turn in range(500):
        views = [client.get(url, headers=h) for h in headers]
        answers = [view.get_json() for view in views]
        received += [view.data for view, answer in zip(views, answers)
                     if answer["view"]["status"] != "match_over"]  # fmt: skip
        assert {answer["deal"]["commitment"] for answer in answers} == {commitment}
        movers = [seat for seat, answer in enumerate(answers) if answer["moves"]]
        if not movers:
            break
        (seat,) = movers
        move = answers[seat]["moves"][turn % len(answers[seat]["moves"])]
        body = {"move": {"card": move["card"], "capture": move["capture"]},
                "version": answers[seat]["version"]}  # fmt: skip
        moved = client.post(f"{url}/moves", json=body, headers=headers[seat])
        assert moved.status_code == 200
        received.append(moved.data)
    assert len(received) > 40
    final = client.get(url, headers=headers[0]).get_json()
    assert final["view"]["status"] == "match_over"
    seed = final["deal"]["seed"]
    assert hashlib.sha256(seed.encode()).hexdigest() == commitment
    # Not one answer any seat received before the match ended gave the seed away.
    assert not [data for data in received if seed.encode() in data]
    # Anyone can deal the match again from the revealed seed and check every seat's cards.
    redealt = client.post("/v1/games/basra/new", json={"seed": seed, "rules": SHORT, "seats": 2})
    state = redealt.get_json()["state"]
    for seat, view in enumerate(dealt):
        assert sorted(state["hands"][seat]) == sorted(view["hand"])
        assert state["table"] == view["table"]
