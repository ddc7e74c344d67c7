"""Times a datetime cannot hold: Mem0's ``ValidationError``, never ``OverflowError``, and nothing written.

``timestamp`` (add) and ``reference_date`` (search) are numbers, strings or datetimes. A unix time
of ``1e20``, ``inf`` or ``10**400``, and dates at the very edge of the calendar (where a shift to
UTC or a day's arithmetic leaves it), once escaped as ``OverflowError`` from ``datetime``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import mem0.exceptions
import pytest

from agentbase_adapters.mem0 import AsyncMem0Adapter, Mem0Adapter
from agentbase_kernel import InvalidArgument

from ...reliability._inputs import HUGE_NUMBERS, row_counts

OFF_THE_CALENDAR = [
    *HUGE_NUMBERS, -1e20, 253402300800, -62135596800,  # 10000-01-01 and 0001-01-01 as unix times
    datetime.max, datetime.min, date.max, date.min, "0001-01-01", "9999-12-31T23:59:59",
    datetime.max.replace(tzinfo=timezone(timedelta(hours=-5))), datetime.min.replace(tzinfo=timezone(timedelta(hours=5))),
    "+inf", "tomorrow-ish", True,
]
IDS = [repr(v)[:30] for v in OFF_THE_CALENDAR]


def _is_mem0_validation_error(exc: BaseException) -> None:
    assert isinstance(exc, mem0.exceptions.ValidationError), type(exc).__mro__
    assert isinstance(exc, ValueError)  # what open-source Mem0 raises for any timestamp
    assert exc.error_code == "VALIDATION_004"


@pytest.mark.parametrize("value", OFF_THE_CALENDAR, ids=IDS)
def test_add_with_a_timestamp_off_the_calendar_is_mem0s_validation_error(db, kernel, value):
    before = row_counts(kernel.path)
    with pytest.raises(mem0.exceptions.ValidationError) as caught:
        Mem0Adapter(db).add("Alice met Bob", user_id="alice", timestamp=value, infer=False)
    _is_mem0_validation_error(caught.value)
    assert row_counts(kernel.path) == before


@pytest.mark.parametrize("value", OFF_THE_CALENDAR, ids=IDS)
def test_search_with_a_reference_date_off_the_calendar_is_mem0s_validation_error(db, value):
    memory = Mem0Adapter(db)
    memory.add("Alice met Bob last week", user_id="alice", infer=False)
    with pytest.raises(mem0.exceptions.ValidationError) as caught:
        memory.search("what happened last week", filters={"user_id": "alice"}, reference_date=value)
    _is_mem0_validation_error(caught.value)


@pytest.mark.parametrize("value", [1e20, float("inf"), datetime.max], ids=["1e20", "inf", "datetime.max"])
async def test_async_memory_refuses_the_same_times(db, value):
    memory = AsyncMem0Adapter(db)
    with pytest.raises(mem0.exceptions.ValidationError):
        await memory.add("Alice met Bob", user_id="alice", timestamp=value, infer=False)
    with pytest.raises(mem0.exceptions.ValidationError):
        await memory.search("Bob", filters={"user_id": "alice"}, reference_date=value)


@pytest.mark.parametrize("value", [date.max, date.min, "9999-12-31", "0001-01-01"])
def test_expiration_date_at_the_calendar_edge_is_a_value_error(db, value):
    # Mem0 raises a plain ValueError for a bad expiration_date; the memory expires at the end of that day
    with pytest.raises(ValueError):
        Mem0Adapter(db).add("Alice met Bob", user_id="alice", expiration_date=value, infer=False)


@pytest.mark.parametrize("value", [0, 1_700_000_000, 1_700_000_000.5, "2023-05-07T10:00:00+02:00", datetime(2023, 5, 7),
                                   date(2023, 5, 7), "0001-01-04", "9999-12-27"])
def test_times_inside_the_calendar_still_work_and_read_back(db, value):
    memory = Mem0Adapter(db)
    memory_id = memory.add("Alice met Bob", user_id="alice", timestamp=value, infer=False)["results"][0]["id"]
    assert memory.get(memory_id)["created_at"]
    assert memory.search("Bob", filters={"user_id": "alice"}, reference_date=value)["results"]


# -- the kernel underneath: every adapter's times go through it ---------------------------------------


@pytest.mark.parametrize("value", [datetime.max, datetime.min.replace(tzinfo=timezone.utc), "0001-01-01", date.max],
                         ids=["max", "min", "year-1-string", "date.max"])
@pytest.mark.parametrize("field", ["created_at", "valid_from", "expires_at"])
def test_kernel_refuses_times_at_the_calendar_edge(kernel, field, value):
    before = row_counts(kernel.path)
    with pytest.raises(InvalidArgument):
        kernel.add_memory("Alice met Bob", user_id="alice", **{field: value})
    assert row_counts(kernel.path) == before


def test_an_early_year_is_stored_four_digits_wide_and_reads_back(kernel):
    # strftime("%Y") writes year 5 as "5" on glibc; the row then could not be read at all
    entry_id = kernel.add_memory("Alice met Bob", user_id="alice", created_at=datetime(5, 3, 1, tzinfo=timezone.utc)).entry.id
    assert kernel.get(entry_id).created_at == datetime(5, 3, 1, tzinfo=timezone.utc)
    assert kernel.verify()["ok"]


@pytest.mark.parametrize("query", ["last week", "9000 years ago", "in 9000 years", "next year"])
def test_relative_dates_past_the_calendar_resolve_to_nothing(kernel, query):
    kernel.add_memory("Alice met Bob", user_id="alice")
    kernel.find(query, user_id="alice", reference_time="0001-01-04")
    kernel.find(query, user_id="alice", reference_time="9999-12-27")
