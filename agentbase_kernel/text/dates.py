"""Date mentions in English and Chinese text, resolved against the message's own timestamp.

"Yesterday" in a message sent on 8 May 2023 means 7 May 2023, whenever the message is ingested or
asked about, so every resolver here takes an explicit ``reference`` and never reads the clock::

    resolve_dates(text, reference) -> [DateMention]    explicit and relative mentions, in text order
    query_window(query, reference) -> (start, end)     the date range a question asks about
    parse_datetime(value)          -> aware UTC datetime (ISO, LoCoMo "1:56 pm on 8 May, 2023", ...)

Absolute dates are read with our patterns (python-dateutil, when installed, backs up
``parse_datetime`` for free-form strings); the relative-expression rules are ours.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Literal

__all__ = ["DateMention", "Grain", "is_date_word", "parse_datetime", "query_window", "resolve_dates"]

Grain = Literal["day", "week", "month", "year"]


@dataclass(frozen=True)
class DateMention:
    """One date expression found in a text, as the inclusive range of days it covers.

    Usage::

        [m] = resolve_dates("I went yesterday", datetime(2023, 5, 8))
        m.start, m.end, m.grain  # date(2023, 5, 7), date(2023, 5, 7), 'day'
    """

    text: str
    start: date
    end: date
    grain: Grain

    def iso(self) -> str:
        """``YYYY-MM-DD`` for a single day, else ``YYYY-MM-DD/YYYY-MM-DD``."""
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}/{self.end.isoformat()}"


# --- calendar helpers -----------------------------------------------------------------------


def _month_range(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _week_range(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


# --- vocabulary -----------------------------------------------------------------------------

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_RE = r"(?:january|february|march|april|may|june|july|august|september|october|november|december" \
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_WEEKDAY_RE = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"

_FEW = -10_000  # "a few", "several", "几": resolved to a small range rather than one day
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2,
    "couple of": 2, "a few": _FEW, "few": _FEW, "several": _FEW,
}
_NUM_RE = r"(?:\d{1,3}|a couple of|a couple|couple of|a few|few|several|an|a|one|two|three|four|five|six" \
    r"|seven|eight|nine|ten|eleven|twelve)"
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM_RE = r"(?:\d{1,3}|[零一二两三四五六七八九十]{1,3}|几|半)"
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


def _number(word: str) -> int:
    word = " ".join(word.casefold().split())
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS[word]


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "几":
        return _FEW
    if "十" in text:
        tens, _, units = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(units, 0) if units else 0)
    return _ZH_DIGITS.get(text, 1)


def _ago(ref: date, n: int, unit: str) -> tuple[date, date, Grain]:
    """``n`` units before ``ref`` (negative ``n`` means after); ``_FEW`` means roughly 2-5."""
    unit = unit.casefold().rstrip("s")
    if n == _FEW:
        lo, hi = _ago(ref, 5, unit), _ago(ref, 2, unit)
        return lo[0], hi[1], lo[2]
    if unit in ("day", "天"):
        day = ref - timedelta(days=n)
        return day, day, "day"
    if unit in ("week", "周", "星期", "礼拜"):
        start, end = _week_range(ref - timedelta(weeks=n))
        return start, end, "week"
    if unit in ("month", "月"):
        start, end = _month_range(*_add_months(ref.year, ref.month, -n))
        return start, end, "month"
    return date(ref.year - n, 1, 1), date(ref.year - n, 12, 31), "year"


def _relative_period(ref: date, offset: int, unit: str) -> tuple[date, date, Grain]:
    """The week/month/year/weekend ``offset`` periods from the one containing ``ref``."""
    if unit == "weekend":
        monday = _week_range(ref)[0] + timedelta(weeks=offset)
        return monday + timedelta(days=5), monday + timedelta(days=6), "week"
    return _ago(ref, -offset, unit)


def _weekday(ref: date, weekday: int, which: str) -> date:
    if which == "last":
        delta = (ref.weekday() - weekday) % 7 or 7
        return ref - timedelta(days=delta)
    if which == "next":
        delta = (weekday - ref.weekday()) % 7 or 7
        return ref + timedelta(days=delta)
    return _week_range(ref)[0] + timedelta(days=weekday)  # "this Friday": the one in this week


# --- the rules ------------------------------------------------------------------------------
# Each rule is (pattern, handler); a handler returns (start, end, grain) or None to reject the match.

_Resolved = tuple[date, date, Grain] | None
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], _Resolved]]
_OFFSETS = {"last": -1, "past": -1, "previous": -1, "this": 0, "current": 0, "next": 1, "coming": 1}


def _day(d: date | None) -> _Resolved:
    return (d, d, "day") if d else None


def _explicit_dmy(m: re.Match[str], ref: date) -> _Resolved:
    year = int(m["year"]) if m["year"] else ref.year
    return _day(_safe_date(year, _MONTHS[m["month"].casefold().rstrip(".")], int(m["day"])))


def _numeric(m: re.Match[str], ref: date) -> _Resolved:
    a, b, year = int(m["a"]), int(m["b"]), int(m["year"])
    if year < 100:
        year += 2000
    # US order (05/07/2023 is 7 May) unless the first number cannot be a month
    month, day = (a, b) if a <= 12 else (b, a)
    return _day(_safe_date(year, month, day))


def _month_year(m: re.Match[str], ref: date) -> _Resolved:
    start, end = _month_range(int(m["year"]), _MONTHS[m["month"].casefold().rstrip(".")])
    return start, end, "month"


def _bare_month(m: re.Match[str], ref: date) -> _Resolved:
    month = _MONTHS[m["month"].casefold().rstrip(".")]
    which = (m.groupdict().get("which") or "").casefold()
    year = ref.year
    if which in ("last", "past", "previous") and month >= ref.month:
        year -= 1
    elif which in ("next", "coming") and month <= ref.month:
        year += 1
    start, end = _month_range(year, month)
    return start, end, "month"


def _year(m: re.Match[str], ref: date) -> _Resolved:
    year = int(m["year"])
    if year > ref.year + 10:  # "Cyberpunk 2077", not a date
        return None
    return date(year, 1, 1), date(year, 12, 31), "year"


_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # first month, northern hemisphere


def _season(m: re.Match[str], ref: date) -> _Resolved:
    first = _SEASONS[m["season"].casefold()]
    which = (m["which"] or "this").casefold()
    spans = []
    for year in range(ref.year - 2, ref.year + 3):
        end_year, end_month = _add_months(year, first, 2)
        spans.append((date(year, first, 1), _month_range(end_year, end_month)[1]))
    if which in ("last", "past", "previous"):  # the latest one that is over ("last summer" in July: a year ago)
        start, end = max(span for span in spans if span[1] < ref)
    elif which in ("next", "coming"):  # the first one still to begin
        start, end = min(span for span in spans if span[0] > ref)
    else:  # this year's; an ongoing winter began last December
        start, end = next(span for span in spans if span[0] <= ref <= span[1] or span[0].year == ref.year)
    return start, end, "month"


_SIMPLE_DAYS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "yesterday": -1, "last night": -1, "the day before yesterday": -2, "tomorrow": 1,
    "the day after tomorrow": 2,
    "今天": 0, "今日": 0, "今晚": 0, "今早": 0, "今天早上": 0, "昨天": -1, "昨日": -1, "昨晚": -1,
    "前天": -2, "明天": 1, "明日": 1, "后天": 2, "大前天": -3,
}


def _simple_day(m: re.Match[str], ref: date) -> _Resolved:
    return _day(ref + timedelta(days=_SIMPLE_DAYS[" ".join(m.group().casefold().split())]))


def _en_ago(m: re.Match[str], ref: date) -> _Resolved:
    return _ago(ref, _number(m["n"]), m["unit"])


def _en_in(m: re.Match[str], ref: date) -> _Resolved:
    n = _number(m["n"])
    return None if n == _FEW else _ago(ref, -n, m["unit"])


def _en_period(m: re.Match[str], ref: date) -> _Resolved:
    return _relative_period(ref, _OFFSETS[m["which"].casefold()], m["unit"].casefold())


def _en_weekday(m: re.Match[str], ref: date) -> _Resolved:
    which = m["which"].casefold()
    which = {"past": "last", "previous": "last", "coming": "next"}.get(which, which)
    return _day(_weekday(ref, _WEEKDAYS[m["weekday"].casefold()], which))


def _other_day(m: re.Match[str], ref: date) -> _Resolved:
    return ref - timedelta(days=7), ref - timedelta(days=1), "day"


def _zh_full(m: re.Match[str], ref: date) -> _Resolved:
    # three alternatives: 2023年[5月[7日]] | 5月7日 | 5月
    year = int(m["year"]) if m["year"] else ref.year
    month_text = m["month"] or m["month2"] or m["month3"]
    day_text = m["day"] or m["day2"]
    if month_text is None:
        return date(year, 1, 1), date(year, 12, 31), "year"
    month = int(month_text)
    if not 1 <= month <= 12:
        return None
    if day_text:
        return _day(_safe_date(year, month, int(day_text)))
    start, end = _month_range(year, month)
    return start, end, "month"


_ZH_PERIOD_OFFSETS = {"上": -1, "上个": -1, "这": 0, "这个": 0, "本": 0, "下": 1, "下个": 1}


def _zh_period(m: re.Match[str], ref: date) -> _Resolved:
    offset = _ZH_PERIOD_OFFSETS[m["which"]]
    unit = m["unit"]
    if unit in ("周末",):
        return _relative_period(ref, offset, "weekend")
    return _relative_period(ref, offset, "month" if unit == "月" else "week")


_ZH_YEARS = {"去年": -1, "今年": 0, "明年": 1, "前年": -2, "后年": 2}


def _zh_year(m: re.Match[str], ref: date) -> _Resolved:
    year = ref.year + _ZH_YEARS[m.group()]
    return date(year, 1, 1), date(year, 12, 31), "year"


def _zh_ago(m: re.Match[str], ref: date) -> _Resolved:
    n = _zh_number(m["n"]) if m["n"] != "半" else 0
    unit = {"个月": "月", "个星期": "星期", "个礼拜": "礼拜", "年": "year"}.get(m["unit"], m["unit"])
    if m["dir"] in ("后", "以后"):
        if n == _FEW:
            return None
        n = -n
    return _ago(ref, n, unit)


def _zh_weekday(m: re.Match[str], ref: date) -> _Resolved:
    offset = {"上": -1, "这": 0, "本": 0, "下": 1, None: 0}[m["which"]]
    monday = _week_range(ref)[0] + timedelta(weeks=offset)
    return _day(monday + timedelta(days=_ZH_WEEKDAYS[m["wd"]]))


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Longer, more specific patterns first: at one position the longest match wins anyway, but the
# order breaks ties.
_RULES: tuple[_Rule, ...] = (
    (_re(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b"),
     lambda m, ref: _day(_safe_date(int(m["year"]), int(m["month"]), int(m["day"])))),
    (_re(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4}|\d{2})\b"), _numeric),
    (_re(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH_RE}),?(?:\s+(?P<year>\d{{4}}))?\b"),
     _explicit_dmy),
    (_re(rf"\b(?P<month>{_MONTH_RE})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<year>\d{{4}}))?\b"),
     _explicit_dmy),
    (_re(rf"\b(?P<month>{_MONTH_RE}),?\s+(?P<year>\d{{4}})\b"), _month_year),
    (_re(rf"\b(?:in|during|since|until|till|by|from|before|after|early|late|mid|end of)\s+"
         rf"(?P<text>(?P<month>{_MONTH_RE}))(?![\w-])(?!,?\s+\d)"),
     _bare_month),
    (_re(rf"\b(?P<which>last|past|previous|this|next|coming)\s+(?P<month>{_MONTH_RE})(?![\w-])(?!,?\s+\d)"),
     _bare_month),
    (_re(r"(?<![$€£¥\d.,])\b(?P<year>(?:19|20)\d{2})\b(?!\s*(?:%|percent|k\b|dollars|people|[-/]\d|,\d{3}))"),
     _year),
    (_re(r"\b(?:the day (?:before yesterday|after tomorrow)|today|tonight|yesterday|tomorrow|last night"
         r"|this (?:morning|afternoon|evening))\b"),
     _simple_day),
    (_re(rf"\b(?P<n>{_NUM_RE})\s+(?P<unit>days?|weeks?|months?|years?)\s+(?:ago|back|before now|earlier)\b"),
     _en_ago),
    (_re(rf"\bin\s+(?P<n>{_NUM_RE})\s+(?P<unit>days?|weeks?|months?|years?)(?:'s|’s)?(?:\s+time)?\b"),
     _en_in),
    (_re(r"\b(?P<which>last|past|previous|this|current|next|coming)\s+(?P<unit>weekend|week|month|year)\b"),
     _en_period),
    (_re(rf"\b(?P<which>last|past|previous|this|next|coming)\s+(?P<weekday>{_WEEKDAY_RE})\b"), _en_weekday),
    (_re(r"\bthe other day\b"), _other_day),
    (_re(r"\b(?:(?P<which>last|past|previous|this|next|coming)\s+|(?:in|during) the\s+)(?P<season>spring|summer|fall|autumn|winter)\b"),
     _season),
    (re.compile(r"(?:(?P<year>\d{4})年)(?:(?P<month>\d{1,2})月(?:(?P<day>\d{1,2})[日号])?)?"
                r"|(?P<month2>\d{1,2})月(?P<day2>\d{1,2})[日号]|(?<![\d个])(?P<month3>\d{1,2})月(?!份?[前后])"),
     _zh_full),
    (re.compile(r"大前天|前天|昨天|昨日|昨晚|今天早上|今天|今日|今晚|今早|明天|明日|后天"), _simple_day),
    (re.compile(r"(?P<which>上个|这个|下个|上|这|本|下)(?P<unit>周末|周|星期|礼拜|月)(?![一二三四五六日天])"), _zh_period),
    (re.compile(r"(?P<which>上|这|本|下)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"), _zh_weekday),
    (re.compile(r"去年|今年|明年|前年|后年"), _zh_year),
    (re.compile(rf"(?P<n>{_ZH_NUM_RE})(?P<unit>天|周|个星期|个礼拜|星期|个月|年)(?P<dir>前|以前|之前|后|以后)"), _zh_ago),
)


def _as_date(reference: datetime | date) -> date:
    return reference.date() if isinstance(reference, datetime) else reference


def resolve_dates(text: str, reference: datetime | date) -> list[DateMention]:
    """Find explicit and relative date mentions and resolve them against ``reference``.

    Args:
        text: English or Chinese text.
        reference: When the text was written (the message's own timestamp, never "now").

    Returns:
        Non-overlapping mentions in text order; at one position the longest expression wins, so
        "May 7, 2023" is one day, not a day plus a year.
    """
    return [mention for _, _, mention in _resolve_spans(text, _as_date(reference))]


def _resolve_spans(text: str, ref: date) -> list[tuple[int, int, DateMention]]:
    """``resolve_dates`` with the (start, end) offsets of each mention's own text."""
    candidates: list[tuple[int, int, int, int, DateMention]] = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            try:
                resolved = handler(m, ref)
            except (OverflowError, ValueError):  # "last week" of year 1, "9000 years ago": off the calendar
                resolved = None
            if resolved is None:
                continue
            start, end, grain = resolved
            # "in May": the preposition anchors the match but is not part of the mention
            group = "text" if "text" in pattern.groupindex else 0
            mention = DateMention(m.group(group).strip().rstrip("."), start, end, grain)
            candidates.append((m.start(), m.end(), m.start(group), m.end(group), mention))
    candidates.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    out: list[tuple[int, int, DateMention]] = []
    last_end = -1
    for match_start, match_end, text_start, text_end, mention in candidates:
        if match_start >= last_end:
            out.append((text_start, text_end, mention))
            last_end = match_end
    return out


_SPAN_RE = _re(rf"\b(?:in\s+)?(?:the\s+)?(?:last|past|previous)\s+(?P<n>{_NUM_RE})\s+(?P<unit>days?|weeks?|months?|years?)\b")
_ZH_SPAN_RE = re.compile(rf"(?:最近|过去|近)(?P<n>{_ZH_NUM_RE})(?P<unit>天|周|个星期|个月|年)")
_SINCE_RE = _re(r"\b(?:since|from)\s+$|自从?$|从$")
_AFTER_RE = _re(r"\bafter\s+$")
_RECENT_RE = _re(r"\brecently\b|\blately\b|最近|近期")


def query_window(query: str, reference: datetime | date) -> tuple[date, date] | None:
    """The inclusive date range a question asks about, or ``None`` if it names no time.

    "in May 2023" -> all of May 2023; "last month" -> the previous calendar month; "in the past 3
    weeks" -> the 21 days up to ``reference``; "since May" -> 1 May up to ``reference``; several
    mentions -> the range that covers them all.

    Args:
        query: The question, English or Chinese.
        reference: The time the question is asked "from" (the conversation's last timestamp, say).
    """
    ref = _as_date(reference)
    m = _SPAN_RE.search(query)
    if m:
        n = _number(m["n"])
        n = 5 if n == _FEW else n
        unit = m["unit"].casefold().rstrip("s")
        days = {"day": n, "week": 7 * n, "month": 31 * n, "year": 366 * n}[unit]
        return ref - timedelta(days=days), ref
    m = _ZH_SPAN_RE.search(query)
    if m:
        n = _zh_number(m["n"]) if m["n"] != "半" else 1
        n = 5 if n == _FEW else n
        days = {"天": n, "周": 7 * n, "个星期": 7 * n, "个月": 31 * n, "年": 366 * n}[m["unit"]]
        return ref - timedelta(days=days), ref
    spans = _resolve_spans(query, ref)
    if not spans:
        if _RECENT_RE.search(query):
            return ref - timedelta(days=30), ref
        return None
    start = min(mention.start for _, _, mention in spans)
    end = max(mention.end for _, _, mention in spans)
    first_start, first_end, first = spans[0]
    if len(spans) == 1 and first.start <= ref:
        # "since May" / "5月以来" run up to the reference; "after May" starts once May is over
        if _SINCE_RE.search(query[:first_start]) or query[first_end:].startswith(("以来", "至今")):
            end = ref
        elif first.end < ref and (
            _AFTER_RE.search(query[:first_start]) or query[first_end:].startswith(("之后", "以后"))
        ):
            start, end = first.end + timedelta(days=1), ref
    return start, end


# --- parse_datetime -------------------------------------------------------------------------

_LOCOMO_RE = _re(
    rf"^\s*(?P<h>\d{{1,2}})(?::(?P<mi>\d{{2}}))?\s*(?P<ampm>am|pm|a\.m\.|p\.m\.)?\s*(?:on\s+)?"
    rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH_RE}),?\s+(?P<year>\d{{4}})\s*$"
)


def _to_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def parse_datetime(value: object) -> datetime | None:
    """Read a timestamp in any of the shapes conversations arrive with, as an aware UTC datetime.

    Accepts ``datetime`` (naive is taken as UTC), ``date`` (midnight UTC), Unix seconds
    (``int``/``float``), ISO 8601 strings (``Z`` suffix too), LoCoMo's "1:56 pm on 8 May, 2023",
    and, when python-dateutil is installed, other strings that name a year.

    Returns:
        The datetime, or ``None`` when ``value`` is ``None``, empty, or not a recognisable time
        (a string without a year is refused rather than completed from today's date).
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return _to_utc(value)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return _to_utc(datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text))
    except ValueError:
        pass
    m = _LOCOMO_RE.match(text)
    if m:
        hour = int(m["h"])
        ampm = (m["ampm"] or "").casefold().replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        try:
            return datetime(int(m["year"]), _MONTHS[m["month"].casefold().rstrip(".")], int(m["day"]),
                            hour, int(m["mi"] or 0), tzinfo=timezone.utc)
        except ValueError:
            return None
    if not re.search(r"\d{4}", text):
        return None
    try:
        from dateutil import parser as dateutil_parser
    except ImportError:  # optional: our own formats above cover ISO and LoCoMo
        return None
    try:
        parsed = dateutil_parser.parse(re.sub(r"\bon\b", " ", text), default=datetime(2000, 1, 1))
    except (ValueError, OverflowError, TypeError):
        return None
    return _to_utc(parsed)


def is_date_word(token: str) -> bool:
    """A query word that belongs to a date ("2023", "july", "friday", "25th"), not to what was said.

    Retrieval reads dates from the query as a window on the entries' dates; such words need not
    occur in a memory's text for it to match.
    """
    token = token.casefold().rstrip(".")
    return any(ch.isdigit() for ch in token) or token in _MONTHS or token in _WEEKDAYS
