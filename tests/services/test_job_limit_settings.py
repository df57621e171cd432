"""The settings of per-type job limits, SKINCARE_JOB_TIMEOUTS and SKINCARE_CONCURRENCY_CAPS:
parsed into their types, each bad value refused in one line naming its variable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.caps import ConcurrencyCaps
from skincare_services.settings import SettingsError, load_settings
from tests.services.test_settings import REQUIRED

_TIMEOUTS = "SKINCARE_JOB_TIMEOUTS: expected type=duration pairs like process_payment=30"


def test_job_timeouts_default_to_none_and_parse_durations() -> None:
    assert dict(load_settings(REQUIRED).job_timeouts) == {}
    raw = "process_payment=30, send_daily_sales_summary=10m"
    settings = load_settings({**REQUIRED, "SKINCARE_JOB_TIMEOUTS": raw})
    assert dict(settings.job_timeouts) == {
        "process_payment": timedelta(seconds=30),
        "send_daily_sales_summary": timedelta(minutes=10),
    }


@pytest.mark.parametrize("raw", ["process_payment", "a=0", "a=soon", "=30", "a=1,a=2", ","])
def test_a_bad_job_timeout_names_its_variable_in_one_line(raw: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({**REQUIRED, "SKINCARE_JOB_TIMEOUTS": raw})
    assert str(caught.value).startswith(f"{_TIMEOUTS}")
    assert str(caught.value).endswith(f"got {raw!r}")
    assert "\n" not in str(caught.value)


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_.]{0,30}", fullmatch=True),
        st.integers(min_value=1, max_value=86_400),
        min_size=1,
        max_size=6,
    )
)
def test_any_set_of_job_timeouts_reads_back_as_written(timeouts: dict[str, int]) -> None:
    raw = ",".join(f"{job_type}={seconds}" for job_type, seconds in timeouts.items())
    settings = load_settings({**REQUIRED, "SKINCARE_JOB_TIMEOUTS": raw})
    assert dict(settings.job_timeouts) == {t: timedelta(seconds=s) for t, s in timeouts.items()}


_CAPS = "SKINCARE_CONCURRENCY_CAPS: expected kind:name=limit pairs like type:send_confirmation"


def test_concurrency_caps_parse_types_queues_and_shared_keys() -> None:
    assert not load_settings(REQUIRED).concurrency_caps
    raw = "type:send_confirmation_email=2, queue:default=8, key:smtp-relay=4:mail+receipt"
    caps = load_settings({**REQUIRED, "SKINCARE_CONCURRENCY_CAPS": raw}).concurrency_caps
    assert caps == ConcurrencyCaps(
        types={"send_confirmation_email": 2},
        queues={"default": 8},
        keys={"smtp-relay": 4},
        shared={"mail": "smtp-relay", "receipt": "smtp-relay"},
    )


@pytest.mark.parametrize(
    "raw",
    [
        "send_confirmation_email=2",
        "type:a=0",
        "type:a=two",
        "queue:=3",
        "type:a=1,type:a=2",
        "key:smtp=4",
        "type:a=2:b",
        "key:smtp=4:a+",
        "key:s=1:a,key:t=1:a",
        "pool:a=1",
    ],
)
def test_a_bad_cap_names_its_variable_in_one_line(raw: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({**REQUIRED, "SKINCARE_CONCURRENCY_CAPS": raw})
    assert str(caught.value).startswith(_CAPS)
    assert str(caught.value).endswith(f"got {raw!r}")
    assert "\n" not in str(caught.value)


@given(
    types=st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True), st.integers(1, 99)),
    queues=st.dictionaries(st.from_regex(r"[a-z][a-z-]{0,12}", fullmatch=True), st.integers(1, 99)),
)
def test_any_caps_read_back_as_written(types: dict[str, int], queues: dict[str, int]) -> None:
    parts = [f"type:{t}={n}" for t, n in types.items()]
    parts += [f"queue:{q}={n}" for q, n in queues.items()]
    if not parts:
        return
    raw = ",".join(parts)
    caps = load_settings({**REQUIRED, "SKINCARE_CONCURRENCY_CAPS": raw}).concurrency_caps
    assert (dict(caps.types), dict(caps.queues)) == (types, queues)
