"""Date mentions resolved against a message's own 2023 timestamp, never the clock."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from agentbase_kernel.text.dates import DateMention, parse_datetime, query_window, resolve_dates

# LoCoMo's first session timestamp; 8 May 2023 was a Monday
REF = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def _one(text: str, reference: datetime = REF) -> DateMention:
    mentions = resolve_dates(text, reference)
    assert len(mentions) == 1, mentions
    return mentions[0]


@pytest.mark.parametrize(
    ("text", "mention", "start", "end", "grain"),
    [
        pytest.param("We met on 7 May 2023.", "7 May 2023", date(2023, 5, 7), date(2023, 5, 7), "day", id="d-month-y"),
        pytest.param("It was May 7, 2023.", "May 7, 2023", date(2023, 5, 7), date(2023, 5, 7), "day", id="month-d-y"),
        pytest.param("Due 2023-05-07 sharp", "2023-05-07", date(2023, 5, 7), date(2023, 5, 7), "day", id="iso"),
        pytest.param("Paid 05/07/2023.", "05/07/2023", date(2023, 5, 7), date(2023, 5, 7), "day", id="us-numeric"),
        pytest.param("Paid 25/12/2022.", "25/12/2022", date(2022, 12, 25), date(2022, 12, 25), "day", id="dmy-numeric"),
        pytest.param("See you on the 3rd of June", "3rd of June", date(2023, 6, 3), date(2023, 6, 3), "day",
                     id="ordinal-no-year"),
        pytest.param("We went in May.", "May", date(2023, 5, 1), date(2023, 5, 31), "month", id="in-month"),
        pytest.param("May 2023 was busy", "May 2023", date(2023, 5, 1), date(2023, 5, 31), "month", id="month-year"),
        pytest.param("I quit back in 2022.", "2022", date(2022, 1, 1), date(2022, 12, 31), "year", id="year"),
        pytest.param("I went yesterday", "yesterday", date(2023, 5, 7), date(2023, 5, 7), "day", id="yesterday"),
        pytest.param("I'm tired today", "today", date(2023, 5, 8), date(2023, 5, 8), "day", id="today"),
        pytest.param("Party tonight!", "tonight", date(2023, 5, 8), date(2023, 5, 8), "day", id="tonight"),
        pytest.param("I ran last week", "last week", date(2023, 5, 1), date(2023, 5, 7), "week", id="last-week"),
        pytest.param("I camped last weekend", "last weekend", date(2023, 5, 6), date(2023, 5, 7), "week",
                     id="last-weekend"),
        pytest.param("Free this weekend?", "this weekend", date(2023, 5, 13), date(2023, 5, 14), "week",
                     id="this-weekend"),
        pytest.param("We move next month", "next month", date(2023, 6, 1), date(2023, 6, 30), "month",
                     id="next-month"),
        pytest.param("It broke two months ago", "two months ago", date(2023, 3, 1), date(2023, 3, 31), "month",
                     id="two-months-ago"),
        pytest.param("I fell 3 days ago", "3 days ago", date(2023, 5, 5), date(2023, 5, 5), "day", id="3-days-ago"),
        pytest.param("I saw it a few days ago", "a few days ago", date(2023, 5, 3), date(2023, 5, 6), "day",
                     id="a-few-days-ago"),
        pytest.param("Dinner next Friday", "next Friday", date(2023, 5, 12), date(2023, 5, 12), "day",
                     id="next-friday"),
        pytest.param("Dinner last Friday", "last Friday", date(2023, 5, 5), date(2023, 5, 5), "day",
                     id="last-friday"),
        pytest.param("I graduated last year", "last year", date(2022, 1, 1), date(2022, 12, 31), "year",
                     id="last-year"),
        pytest.param("Back in 2 weeks", "in 2 weeks", date(2023, 5, 22), date(2023, 5, 28), "week", id="in-2-weeks"),
        pytest.param("我昨天去了", "昨天", date(2023, 5, 7), date(2023, 5, 7), "day", id="zh-yesterday"),
        pytest.param("上周很忙", "上周", date(2023, 5, 1), date(2023, 5, 7), "week", id="zh-last-week"),
        pytest.param("3天前下雨了", "3天前", date(2023, 5, 5), date(2023, 5, 5), "day", id="zh-3-days-ago"),
        pytest.param("两个月前搬家了", "两个月前", date(2023, 3, 1), date(2023, 3, 31), "month",
                     id="zh-two-months-ago"),
        pytest.param("去年毕业", "去年", date(2022, 1, 1), date(2022, 12, 31), "year", id="zh-last-year"),
        pytest.param("生于2023年5月7日", "2023年5月7日", date(2023, 5, 7), date(2023, 5, 7), "day", id="zh-full-date"),
        pytest.param("5月去旅行", "5月", date(2023, 5, 1), date(2023, 5, 31), "month", id="zh-month"),
        pytest.param("上周五见过他", "上周五", date(2023, 5, 5), date(2023, 5, 5), "day", id="zh-last-friday"),
        pytest.param("十天前", "十天前", date(2023, 4, 28), date(2023, 4, 28), "day", id="zh-ten-days-ago"),
    ],
)
def test_resolve_dates(text: str, mention: str, start: date, end: date, grain: str) -> None:
    assert _one(text) == DateMention(mention, start, end, grain)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I may go later.", id="modal-may"),
        pytest.param("March on, soldiers!", id="verb-march"),
        pytest.param("We had 2,000 people and $2020 in cash.", id="numbers-not-years"),
        pytest.param("No dates here at all.", id="nothing"),
        pytest.param("I finally played Cyberpunk 2077.", id="title-not-year"),
    ],
)
def test_no_false_dates(text: str) -> None:
    assert resolve_dates(text, REF) == []


def test_mentions_come_in_text_order_without_overlaps() -> None:
    mentions = resolve_dates("Yesterday I booked flights for May 20, 2023 and for next month.", REF)
    assert [m.text for m in mentions] == ["Yesterday", "May 20, 2023", "next month"]


def test_relative_dates_follow_the_reference_not_the_clock() -> None:
    ref = parse_datetime("1:56 pm on 8 May, 2023")
    assert ref is not None
    assert _one("I went to the support group yesterday", ref).start == date(2023, 5, 7)
    later = ref + timedelta(days=30)
    assert _one("I went to the support group yesterday", later).start == date(2023, 6, 6)


def test_last_month_across_a_year_boundary() -> None:
    assert _one("last month", date(2023, 1, 15)) == DateMention(
        "last month", date(2022, 12, 1), date(2022, 12, 31), "month"
    )


def test_last_may_means_the_previous_may() -> None:
    assert _one("I saw her last May", REF).start == date(2022, 5, 1)


def test_iso_of_a_mention() -> None:
    assert _one("last weekend").iso() == "2023-05-06/2023-05-07"
    assert _one("yesterday").iso() == "2023-05-07"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="locomo-pm"),
        pytest.param("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=timezone.utc),
                     id="locomo-midnight"),
        pytest.param("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="iso-z"),
        pytest.param("2023-05-08T15:56:00+02:00", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="iso-offset"),
        pytest.param("2023-05-08", datetime(2023, 5, 8, tzinfo=timezone.utc), id="iso-date"),
        pytest.param("May 8, 2023 1:56 PM", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="free-form"),
        pytest.param(date(2023, 5, 8), datetime(2023, 5, 8, tzinfo=timezone.utc), id="date"),
        pytest.param(datetime(2023, 5, 8, 13, 56), datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="naive"),
        pytest.param(1683554160, datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), id="unix-seconds"),
        pytest.param(None, None, id="none"),
        pytest.param("", None, id="empty"),
        pytest.param("not a date", None, id="garbage"),
        pytest.param("1:56 pm", None, id="no-year-refused"),
    ],
)
def test_parse_datetime(value: object, expected: datetime | None) -> None:
    assert parse_datetime(value) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("What did I do in May 2023?", (date(2023, 5, 1), date(2023, 5, 31)), id="in-may-2023"),
        pytest.param("What did I buy last month?", (date(2023, 4, 1), date(2023, 4, 30)), id="last-month"),
        pytest.param("What happened 3 weeks ago?", (date(2023, 4, 17), date(2023, 4, 23)), id="3-weeks-ago"),
        pytest.param("Who called yesterday?", (date(2023, 5, 7), date(2023, 5, 7)), id="yesterday"),
        pytest.param("What did I read in the past 2 weeks?", (date(2023, 4, 24), date(2023, 5, 8)), id="past-2-weeks"),
        pytest.param("What have I cooked since March?", (date(2023, 3, 1), date(2023, 5, 8)), id="since-march"),
        pytest.param("我上个月做了什么？", (date(2023, 4, 1), date(2023, 4, 30)), id="zh-last-month"),
        pytest.param("最近两周我读了什么", (date(2023, 4, 24), date(2023, 5, 8)), id="zh-last-two-weeks"),
        pytest.param("What is my dog's name?", None, id="no-time"),
    ],
)
def test_query_window(query: str, expected: tuple[date, date] | None) -> None:
    assert query_window(query, REF) == expected


@pytest.mark.parametrize(
    ("text", "reference", "start", "end"),
    [
        pytest.param("last summer", date(2023, 5, 8), date(2022, 6, 1), date(2022, 8, 31), id="last-summer-before"),
        pytest.param("last summer", date(2023, 10, 1), date(2023, 6, 1), date(2023, 8, 31), id="last-summer-after"),
        pytest.param("this summer", date(2023, 5, 8), date(2023, 6, 1), date(2023, 8, 31), id="this-summer"),
        pytest.param("next summer", date(2023, 7, 15), date(2024, 6, 1), date(2024, 8, 31), id="next-summer-during"),
        pytest.param("this winter", date(2024, 1, 10), date(2023, 12, 1), date(2024, 2, 29), id="this-winter-ongoing"),
        pytest.param("in the fall", date(2023, 5, 8), date(2023, 9, 1), date(2023, 11, 30), id="in-the-fall"),
    ],
)
def test_seasons(text: str, reference: date, start: date, end: date) -> None:
    assert _one(text, reference) == DateMention(text, start, end, "month")
