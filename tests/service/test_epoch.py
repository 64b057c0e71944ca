"""A session rolled back by its Redis (a crash after the last write reached the disk) is
told apart by its epoch: clients see it change, a move chosen before the loss is a 409
naming the current version, and play goes on from what survived."""

import requests

from tests.redis_server import RedisServer
from tests.service.sessions_client import serve


def test_a_rolled_back_session_says_so_and_plays_on(tmp_path):
    with RedisServer(tmp_path / "redis") as server, serve({"REDIS_URL": server.url}) as base:
        created = requests.post(
            f"{base}/v1/sessions",
            json={"game": "basra", "seats": [{"type": "human"}, {"type": "human"}]},
            timeout=10,
        ).json()
        assert created["epoch"] == 0
        url = f"{base}/v1/sessions/{created['id']}"
        headers = [{"Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]]
        views = [requests.get(url, headers=h, timeout=10).json() for h in headers]
        (seat,) = [seat for seat, view in enumerate(views) if view["moves"]]
        first = {"move": views[seat]["moves"][0], "version": 0}
        with server.client() as client:
            client.save()
        moved = requests.post(f"{url}/moves", json=first, headers=headers[seat], timeout=10)
        assert (moved.status_code, moved.json()["version"], moved.json()["epoch"]) == (200, 1, 0)
        reply = requests.get(url, headers=headers[1 - seat], timeout=10).json()["moves"][0]
        server.kill()  # the acknowledged move was never saved: it is lost
        server.start()
        # This process still knows version 1; the store's compare-and-set tells otherwise.
        after = {"move": reply, "version": 1}
        refused = requests.post(f"{url}/moves", json=after, headers=headers[1 - seat], timeout=10)
        assert refused.status_code == 409
        assert refused.json()["version"] == 0
        assert "epoch 1" in refused.json()["detail"]
        back = requests.get(url, headers=headers[seat], timeout=10).json()
        assert (back["version"], back["epoch"]) == (0, 1)
        again = requests.post(f"{url}/moves", json=first, headers=headers[seat], timeout=10)
        assert (again.status_code, again.json()["version"], again.json()["epoch"]) == (200, 1, 1)
        events = requests.get(f"{url}/events", params={"after": 0}, headers=headers[seat],
                              timeout=10).json()  # fmt: skip
        assert [event["version"] for event in events if event["type"] == "move"] == [1]
