import pytest
import redis


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
