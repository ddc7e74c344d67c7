"""Deterministic synthetic memories for the scaling curve: people, places, organisations, dates, topics.

``memories(n, seed)`` yields the same ``n`` items for the same seed, whatever ``n`` is (item ``i``
depends only on ``seed`` and ``i``), so the 10k set is a prefix of the 100k set. Words follow a Zipf
law over a vocabulary that grows with the corpus (common words plus generated rare ones, as in real
chat logs: Heaps' law), names and places repeat with a long tail, and a third of the items carry a
date in one of several written forms.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any

FIRST = ("Alice Bob Carla Dmitri Elena Farid Grace Hiro Ines Jonas Kwame Lena Mateo Nadia Omar Priya Quentin Rosa "
         "Sanjay Tara Ugo Vera Wei Ximena Yusuf Zoe Amara Bruno Chloe Diego Emeka Freya Gabriel Hana Ivan Jade "
         "Kenji Lucia Malik Nora Oscar Paula Rafael Sofia Tomas Uma Viktor Wanda Yara Zane").split()
LAST = ("Smith Garcia Chen Okafor Novak Rossi Tanaka Haddad Silva Kowalski Nguyen Schmidt Dubois Ivanova Patel "
        "Andersen Moreau Costa Yilmaz Kim Mensah Lindqvist Horvath Fischer Romero").split()
CITIES = ("Paris Berlin Lisbon Tokyo Nairobi Toronto Austin Denver Oslo Prague Seoul Lima Dublin Madrid Boston "
          "Chicago Sydney Mumbai Cairo Vienna Zurich Porto Kyoto Accra Quito Hanoi Bergen Lyon Seville Krakow").split()
ORGS = ("Acme Globex Initech Umbrella Hooli Vandelay Stark Wayne Wonka Tyrell Cyberdyne Soylent Massive Dynamic "
        "Aperture Gringotts Oscorp Nakatomi Monarch Pied Piper").split()
NOUNS = ("project budget report meeting deadline dinner trip concert garden kitchen recipe painting novel guitar "
         "bicycle marathon workshop conference interview apartment lease contract invoice roadmap release bug "
         "feature dashboard database migration backup server laptop phone camera puppy kitten birthday wedding "
         "vacation flight hotel museum exhibition festival class course exam thesis paper podcast movie series "
         "album playlist game tournament match team league coach doctor dentist appointment prescription yoga "
         "pottery sourdough coffee tea wine cheese chocolate salad soup curry sushi pasta pizza tacos").split()
ADJS = ("new old quarterly annual weekly urgent delayed tiny huge favourite spicy quiet noisy remote local "
        "vintage modern cheap expensive shared private early late difficult easy").split()
VERBS = ("finished started cancelled booked visited planned moved joined left bought sold fixed painted cooked "
         "watched read wrote signed reviewed shipped postponed loved hated recommended borrowed returned").split()
MONTHS = ("January February March April May June July August September October November December").split()
TEMPLATES = (
    "{p} {v} the {a} {n} with {p2} in {c}.",
    "I {v} the {n} {n2} at {o} {d}.",
    "{p} moved to {c} to work at {o} {d}.",
    "Remember that {p} prefers {n} over {n2} and dislikes {a} {n3}.",
    "Met {p} and {p2} for {n} near the {c} {n2} {d}.",
    "{o} {v} the {a} {n} for {p}; follow up about the {n2} {r}.",
    "My {n} in {c} is {a}, {p} said the {n2} was {a2}.",
    "{p} recommended a {a} {n} called {r} {n2}.",
    "Note: {p}'s {n} is {D}, bring {n2} and {n3}.",
    "We {v} {r} and the {n} {n2} again, {p} was there too.",
)
QUESTIONS = (
    "What did {p} say about the {n}?",
    "When did {p} move to {c}?",
    "Who works at {o}?",
    "What does {p} prefer, {n} or {n2}?",
    "{a} {n} in {c}",
    "Did I ever {v} the {n} with {p}?",
    "What happened with the {n} {n2} last month?",
    "Where did I meet {p2}?",
)
_SYLLABLES = "ka lo mi nu se ta vo ri zan pel dor fin gra hul jem kov lut mar nex orb".split()


def _zipf(rng: random.Random, items: tuple[str, ...] | list[str], s: float = 0.7) -> str:
    # inverse-CDF on a Zipf-ish law: index ~ floor(len ** u ** s) - 1 keeps a heavy head and a long tail
    i = int(len(items) ** (rng.random() ** s)) - 1
    return items[max(0, min(i, len(items) - 1))]


def _rare(rng: random.Random, i: int) -> str:
    # vocabulary grows with the corpus: word index drawn up to ~ sqrt of the position (Heaps' law)
    k = rng.randrange(0, 50 + int((i + 1) ** 0.6))
    word = ""
    while True:
        word += _SYLLABLES[k % len(_SYLLABLES)]
        k //= len(_SYLLABLES)
        if k == 0:
            return word.capitalize()


def _date(rng: random.Random) -> str:
    day = date(2021, 1, 1) + timedelta(days=rng.randrange(0, 5 * 365))
    form = rng.randrange(4)
    if form == 0:
        return f"on {day.day} {MONTHS[day.month - 1]} {day.year}"
    if form == 1:
        return f"on {day.isoformat()}"
    if form == 2:
        return f"in {MONTHS[day.month - 1]} {day.year}"
    return rng.choice(("last week", "yesterday", "next Friday", "two days ago", "this summer", "last Tuesday"))


def _person(rng: random.Random) -> str:
    first = _zipf(rng, FIRST, 1.0)
    return f"{first} {_zipf(rng, LAST)}" if rng.random() < 0.3 else first


def _fill(template: str, rng: random.Random, i: int) -> str:
    slots = {"p": _person(rng), "p2": _person(rng), "c": _zipf(rng, CITIES), "o": _zipf(rng, ORGS),
             "n": _zipf(rng, NOUNS), "n2": _zipf(rng, NOUNS), "n3": _zipf(rng, NOUNS), "a": rng.choice(ADJS),
             "a2": rng.choice(ADJS), "v": rng.choice(VERBS), "r": _rare(rng, i),
             "d": _date(rng) if rng.random() < 0.34 else "", "D": _date(rng)}
    return " ".join(template.format(**slots).split()).replace(" .", ".").replace(" ;", ";")


def memories(n: int, seed: int, *, user_id: str = "u0", first: int = 0) -> Iterator[dict[str, Any]]:
    """``n`` kernel ``add_memories`` items from item ``first`` on; item ``i`` depends only on ``(seed, i)``."""
    start = datetime(2021, 1, 1, tzinfo=timezone.utc)
    for i in range(first, first + n):
        rng = random.Random(seed * 1_000_003 + i)
        text = _fill(rng.choice(TEMPLATES), rng, i)
        yield {"text": f"{text} (#{i})" if rng.random() < 0.02 else text, "user_id": user_id,
               "metadata": {"n": i}, "category": "synthetic",
               "created_at": start + timedelta(minutes=i * 7)}


def queries(n: int, seed: int) -> list[str]:
    """``n`` deterministic questions in the corpus' vocabulary."""
    out = []
    for i in range(n):
        rng = random.Random(seed * 7_000_003 + i)
        out.append(_fill(rng.choice(QUESTIONS), rng, i))
    return out

