"""Finance reports: the ones listed on the admin index, and the tax summaries a report of a
period shows. Apps register theirs from their AppConfig.ready() (the games: the fee report;
the tax reports: GST and TDS), so the ledger names no other app's pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.urls import reverse
from djmoney.money import Money


@dataclass(frozen=True)
class Report:
    title: str
    url_name: str  # an admin URL name, e.g. "admin:tournaments_game_fee_report"
    permission: str  # who sees the link (the page checks again)
    description: str = ""


@dataclass(frozen=True)
class SummaryLine:
    label: str  # e.g. "GST payable on fees"
    amount: Money


# (start, end) of a period, end exclusive -> its lines
TaxSummary = Callable[[datetime, datetime], list[SummaryLine]]
_REPORTS: dict[str, Report] = {}
_TAX_SUMMARIES: list[TaxSummary] = []


def report_register(report: Report) -> None:
    _REPORTS[report.url_name] = report


def reports_for(user: AbstractBaseUser) -> list[tuple[Report, str]]:
    """The reports this user may open, with their URLs, by title."""
    return [
        (r, reverse(r.url_name))
        for r in sorted(_REPORTS.values(), key=lambda r: r.title)
        if user.has_perm(r.permission)
    ]


def tax_summary_register(summary: TaxSummary) -> None:
    """The place for GST and TDS: the fee report shows every registered summary of its period."""
    if summary not in _TAX_SUMMARIES:
        _TAX_SUMMARIES.append(summary)


def tax_summaries(start: datetime, end: datetime) -> list[SummaryLine] | None:
    """Every registered summary's lines for [start, end); None while no tax report exists."""
    if not _TAX_SUMMARIES:
        return None
    return [line for summary in _TAX_SUMMARIES for line in summary(start, end)]
