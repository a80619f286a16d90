"""Finance reports listed on the admin index. Apps register theirs from their
AppConfig.ready() (the games: the fee report), so the ledger names no other app's pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.urls import reverse


@dataclass(frozen=True)
class Report:
    title: str
    url_name: str  # an admin URL name, e.g. "admin:tournaments_game_fee_report"
    permission: str  # who sees the link (the page checks again)
    description: str = ""


_REPORTS: dict[str, Report] = {}


def report_register(report: Report) -> None:
    _REPORTS[report.url_name] = report


def reports_for(user: AbstractBaseUser) -> list[tuple[Report, str]]:
    """The reports this user may open, with their URLs, by title."""
    return [
        (r, reverse(r.url_name))
        for r in sorted(_REPORTS.values(), key=lambda r: r.title)
        if user.has_perm(r.permission)
    ]
