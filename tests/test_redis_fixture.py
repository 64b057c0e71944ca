from itertools import pairwise

import pytest
import redis

from tests.redis_server import free_port, port_range, worker_share


def test_set_then_get(redis_url):
    with redis.Redis.from_url(redis_url) as client:
        client.set("seat", "north")
        assert client.get("seat") == b"north"


def test_each_test_starts_empty(redis_url):
    with redis.Redis.from_url(redis_url) as client:
        assert client.dbsize() == 0


def test_stop_then_start_on_the_same_port(redis_server, redis_url):
    port = redis_server.port
    with redis.Redis.from_url(redis_url, socket_connect_timeout=1) as client:
        assert client.ping()

        redis_server.stop()
        with pytest.raises(redis.ConnectionError):
            client.ping()

        redis_server.start()
        assert redis_server.port == port
        assert redis_server.url == redis_url
        assert client.ping()


def test_a_port_is_handed_out_once_and_from_this_workers_share():
    ports = [free_port() for _ in range(500)]
    assert len(set(ports)) == len(ports)
    lowest, highest = port_range()
    assert all(lowest <= port <= highest for port in ports)


def test_xdist_workers_share_the_ports_without_overlap(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
    shares = []
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        shares.append(worker_share(10000, 32767))
    assert shares[0][0] == 10000 and shares[-1][1] <= 32767
    assert all(low <= high for low, high in shares)
    assert all(a[1] < b[0] for a, b in pairwise(shares))
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert worker_share(10000, 32767) == (10000, 32767)
