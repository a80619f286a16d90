"""A ledger month: an IST calendar month, as finance reads its days (pure: no Django, no I/O).

India keeps +05:30 all year, so every month starts at 18:30 UTC on the last day of the month
before; the entries' partitions and the month closes use these bounds, and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

INDIA = ZoneInfo("Asia/Kolkata")
_NAME = re.compile(r"^(20\d\d)-(0[1-9]|1[0-2])$")


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Month:
        """`2026-10`; anything else is a ValueError."""
        found = _NAME.match(text.strip())
        if not found:
            raise ValueError(f"a month is written YYYY-MM (2000-2099), not {text!r}")
        return cls(int(found[1]), int(found[2]))

    @classmethod
    def of(cls, moment: datetime) -> Month:
        """The IST month an aware moment falls in."""
        local = moment.astimezone(INDIA)
        return cls(local.year, local.month)

    @property
    def start(self) -> datetime:
        """The first instant of the month (18:30 UTC the day before it starts in India)."""
        return datetime(self.year, self.month, 1, tzinfo=INDIA).astimezone(UTC)

    @property
    def end(self) -> datetime:
        """The first instant of the next month (exclusive)."""
        return self.next().start

    def next(self, months: int = 1) -> Month:
        index = self.year * 12 + self.month - 1 + months
        return Month(index // 12, index % 12 + 1)

    def previous(self) -> Month:
        return self.next(-1)

    @property
    def name(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def partition(self) -> str:
        """The entries' partition of this month."""
        return f"wallets_entry_{self.year:04d}_{self.month:02d}"

    def __str__(self) -> str:
        return self.name


def months_between(first: Month, last: Month) -> list[Month]:
    """Every month from `first` to `last`, both included."""
    months, month = [], first
    while month <= last:
        months.append(month)
        month = month.next()
    return months
