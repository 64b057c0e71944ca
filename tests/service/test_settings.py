"""A bad setting stops the start with a message naming it; it never quietly means something
else. Before, a switch read anything but an `on` word as off (`RATE_LIMITS=ture` turned
every rate limit off: contract-operations.md §1, rate limits are off only with an explicit
setting), a word for a number failed with Python's "invalid literal for int()", naming no
setting, and a pool of 0 connections or a negative timeout started and failed later."""

import subprocess

import pytest

from service import create_app
from service.config import SettingError, load_config
from tests.gunicorn_server import GUNICORN, ROOT
from tests.redis_server import free_port


@pytest.mark.parametrize("text", ["ture", "", "enabled", "2"])
@pytest.mark.parametrize("name", ["RATE_LIMITS", "METRICS", "CLIENT_SEEDS", "REDIS_CLUSTER"])
def test_a_switch_that_is_neither_on_nor_off_stops_the_start(name, text):
    with pytest.raises(SettingError, match=f"^{name}="):
        load_config(environ={name: text})


@pytest.mark.parametrize(("text", "on"), [
    ("true", True), ("1", True), ("Yes", True), (" on ", True),
    ("false", False), ("0", False), ("NO", False), ("off", False),
])  # fmt: skip
def test_a_switch_reads_its_words(text, on):
    assert load_config(environ={"RATE_LIMITS": text})["RATE_LIMITS"] is on


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("MAX_BODY_BYTES", "64k"),
        ("MAX_BODY_BYTES", "0"),
        ("REDIS_MAX_CONNECTIONS", "0"),
        ("REDIS_MIN_REPLICAS", "-1"),
        ("REDIS_TIMEOUT_SECONDS", "0"),
        ("REDIS_TIMEOUT_SECONDS", "nan"),
        ("SESSION_TTL_SECONDS", "inf"),
        ("SESSION_TTL_SECONDS", "1 day"),
        ("MAX_WAITERS_PER_TOKEN", "-4"),
        ("MAX_WAITERS_PER_ADDRESS", "1.5"),
        ("MAX_WAITERS", "lots"),
        ("GUNICORN_WORKER_CONNECTIONS", "1.5"),
        ("BODY_TIMEOUT_SECONDS", "-1"),
        ("WEBHOOK_ATTEMPTS", "0"),
        ("LOG_LEVEL", "loud"),
    ],
)
def test_a_setting_that_cannot_work_stops_the_start_naming_it(name, text):
    with pytest.raises(SettingError, match=f"^{name}="):
        load_config(environ={name: text})


@pytest.mark.parametrize(
    "name", ["REDIS_MIN_REPLICAS", "LONG_POLL_SECONDS", "READY_GRACE_SECONDS",
             "MAX_WAITERS_PER_TOKEN", "MAX_WAITERS_PER_ADDRESS", "MAX_WAITERS"],
)  # fmt: skip
def test_these_may_be_zero(name):
    assert load_config(environ={name: "0"})[name] == 0


def test_a_bad_number_given_to_create_app_stops_it_too():
    with pytest.raises(SettingError, match=r"^REDIS_MAX_CONNECTIONS="):
        create_app({"REDIS_MAX_CONNECTIONS": 0})


def test_a_redis_url_without_its_scheme_is_named_and_not_shown():
    """The URL may hold a password: the message names the setting, not its value."""
    with pytest.raises(ValueError, match=r"^REDIS_URL ") as refused:
        create_app({"REDIS_URL": "user:s3cret@localhost:6379/0"})
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize(
    ("setting", "named"),
    [("RATE_LIMITS=ture", "RATE_LIMITS='ture'"),
     ("GUNICORN_WORKER_CONNECTIONS=1k", "GUNICORN_WORKER_CONNECTIONS='1k'")],
)  # fmt: skip
def test_gunicorn_with_a_bad_setting_exits_naming_it(setting, named):
    name, _, value = setting.partition("=")
    env = {"PATH": "/usr/bin:/bin", "HOST": "127.0.0.1", "PORT": str(free_port()), name: value}
    finished = subprocess.run(
        [str(GUNICORN), "-c", "gunicorn.conf.py"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert finished.returncode != 0
    assert named in finished.stderr + finished.stdout, finished.stderr[-2000:]


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"REDIS_CLUSTER": True}, "REDIS_CLUSTER=true needs REDIS_URL"),
        ({"REDIS_MIN_REPLICAS": 1}, "REDIS_MIN_REPLICAS needs Redis"),
        ({"REDIS_SENTINEL_MASTER": "m"}, "REDIS_SENTINEL_MASTER needs REDIS_SENTINELS"),
        ({"REDIS_SENTINELS": "127.0.0.1:26379", "REDIS_SENTINEL_MASTER": "m",
          "REDIS_CLUSTER": True}, "exclude each other"),
    ],
)  # fmt: skip
def test_a_redis_setting_without_its_redis_stops_the_start(settings, says):
    """Before, each quietly meant the in-process store: one worker, and with
    REDIS_MIN_REPLICAS an acknowledgement no replica stood behind."""
    with pytest.raises(ValueError, match=says):
        create_app(settings)
