"""The finance home page (the admin index): what waits and what is wrong, for the signed-in user,
each line a link to the filtered list that shows it.

Built from what the apps register, like pretix's dashboard widgets, so the index names no page:

- **What waits**: withdrawals to review, then one line per proposal kind registered with
  maker-checker (`services.proposals.proposal_kinds`: adjustments, reversals, bonus grants,
  withdrawal reviews, a game template's money terms, and any kind an app adds later);
- **What is wrong**: the last reconciliation (when; clean, or how many discrepancies) and what
  it reported stuck (every check's `*_stuck` kind: games, withdrawals, ...); webhook endpoints
  disabled after failing for a day;
- **Today**: fee, GST and TDS since midnight IST (the platform accounts' entries of today), and
  the real-money mode in force.

A line is shown to who may open its list; it is marked `yours` when the user may act on it
(review, approve). Every count stops at `CAP` (`count_capped`): the page costs a few indexed
queries whatever the size of the ledger (`bench/admin_pages.py` times it on a million entries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone

from rummy_ledger.events.models import WebhookEndpoint
from wallets import references
from wallets.models import (
    PLATFORM_CURRENCY,
    Account,
    Discrepancy,
    Entry,
    PlatformAccount,
    ProposalStatus,
    ReconciliationReport,
    Withdrawal,
)
from wallets.money.formatting import count, ist, money
from wallets.reconciliation import CHECKS
from wallets.selectors import count_capped, withdrawals_to_review
from wallets.services.proposals import proposal_kinds

CAP = 999  # a queue longer than this reads "more than 999"
WAITS, WRONG, TODAY = "What waits", "What is wrong", "Today"
SECTIONS = (WAITS, WRONG, TODAY)
TODAY_ACCOUNTS = {  # what the platform took today, in the order shown
    PlatformAccount.FEE_REVENUE: "fee",
    PlatformAccount.GST_PAYABLE: "GST",
    PlatformAccount.TDS_PAYABLE: "TDS",
}


@dataclass(frozen=True)
class Line:
    label: str
    value: str
    url: str = ""
    alert: bool = False  # something waits or is wrong
    yours: bool = False  # the signed-in user is who acts on it


# user -> its lines (empty when the user may see none of them)
Widget = Callable[[AbstractBaseUser], list[Line]]


def changelist(model, **filters) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


def _can_view(user: AbstractBaseUser, model) -> bool:
    return user.has_perm(f"{model._meta.app_label}.view_{model._meta.model_name}")


def _counted(queryset) -> tuple[str, bool]:
    """(the count as read, whether it is more than none)."""
    return _shown(count_capped(queryset, CAP))


def _shown(n: int) -> tuple[str, bool]:
    return (f"more than {CAP}" if n > CAP else count(n)), n > 0


def _proposed_counts(models: list) -> list[int]:
    """How many of each kind wait, each counted up to CAP + 1, in ONE query (a UNION ALL of
    the capped counts): the page costs the same however many kinds the apps register."""
    parts, params = [], []
    for i, model in enumerate(models):
        capped = model.objects.filter(status=ProposalStatus.PROPOSED).order_by().values("pk")
        sql, part_params = capped[: CAP + 1].query.sql_with_params()
        parts.append(f"SELECT {i}, count(*) FROM ({sql}) AS kind_{i}")
        params += part_params
    if not parts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        by_kind = dict(cursor.fetchall())
    return [by_kind[i] for i in range(len(models))]


def withdrawals_waiting(user: AbstractBaseUser) -> list[Line]:
    if not _can_view(user, Withdrawal):
        return []
    shown, waiting = _counted(withdrawals_to_review())
    url = changelist(Withdrawal, waiting="review")  # the list's filter (WaitingFilter)
    yours = user.has_perm("wallets.add_withdrawalreview")
    return [Line("withdrawals to review", shown, url, waiting, yours)]


def proposals_waiting(user: AbstractBaseUser) -> list[Line]:
    lines = []
    models = [model for model in proposal_kinds() if _can_view(user, model)]
    for model, n in zip(models, _proposed_counts(models), strict=True):
        shown, waiting = _shown(n)
        url = changelist(model, status__exact=ProposalStatus.PROPOSED)
        label = f"{model._meta.verbose_name_plural} to approve"
        lines.append(Line(label, shown, url, waiting, user.has_perm(model.approve_permission)))
    return lines


def _stuck_kinds() -> list[str]:
    return [kind for check in CHECKS for kind in check.kinds if kind.endswith("_stuck")]


def reconciliation_last(user: AbstractBaseUser) -> list[Line]:
    if not _can_view(user, ReconciliationReport):
        return []
    report = ReconciliationReport.objects.order_by("-started_at", "-pk").first()
    if report is None:
        url = changelist(ReconciliationReport)
        return [Line("last reconciliation", "never run", url, alert=True)]
    page = reverse("admin:wallets_reconciliationreport_change", args=[report.pk])
    outcome = {
        ReconciliationReport.Status.CLEAN: "clean",
        ReconciliationReport.Status.DISCREPANCIES: f"{count(report.discrepancy_count)} "
        f"discrepanc{'y' if report.discrepancy_count == 1 else 'ies'}",
    }.get(report.status, report.status)
    wrong = report.status != ReconciliationReport.Status.CLEAN
    lines = [Line("last reconciliation", f"{ist(report.started_at)}: {outcome}", page, wrong)]
    if _can_view(user, Discrepancy):
        for kind in _stuck_kinds():
            shown, stuck = _counted(Discrepancy.objects.filter(report=report, kind=kind))
            url = changelist(Discrepancy, report__id__exact=report.pk, kind__exact=kind)
            lines.append(Line(f"{kind.removesuffix('_stuck')}s reported stuck", shown, url, stuck))
    return lines


def _today() -> tuple[datetime, datetime]:
    start = datetime.combine(timezone.localdate(), time.min, tzinfo=timezone.get_current_timezone())
    return start, start + timedelta(days=1)


def money_today(user: AbstractBaseUser) -> list[Line]:
    """Fee, GST and TDS since midnight: what today's entries put into those platform accounts
    (one grouped query on the entries' (account, time) index)."""
    if not _can_view(user, Entry):
        return []
    codes = {code: references.platform_account_code(code) for code in TODAY_ACCOUNTS}
    accounts = {a.code: a for a in Account.objects.filter(code__in=codes.values())}
    start, end = _today()
    totals = dict(
        Entry.objects.filter(account__in=accounts.values(), created_at__gte=start)
        .values("account_id")
        .annotate(total=Sum("amount"))
        .values_list("account_id", "total")
    )
    window = {"created_at__gte": str(start), "created_at__lt": str(end)}
    lines = []
    for code, label in TODAY_ACCOUNTS.items():
        account = accounts.get(codes[code])  # none yet on a fresh install
        if account is None:
            lines.append(Line(f"{label} today", money(0, PLATFORM_CURRENCY[code])))
            continue
        url = changelist(Entry, account__id__exact=account.pk, **window)
        amount = money(totals.get(account.pk, 0), account.currency)
        lines.append(Line(f"{label} today", amount, url))
    return lines


def real_money_mode(user: AbstractBaseUser) -> list[Line]:
    mode = settings.REAL_MONEY
    if mode == "restricted":
        blocked = ", ".join(sorted(settings.REAL_MONEY_BLOCKED_REGIONS)) or "none"
        mode = f"restricted (regions blocked: {blocked}; unknown regions refused)"
    return [Line("real-money mode", mode, alert=settings.REAL_MONEY != "on")]


def webhooks_disabled(user: AbstractBaseUser) -> list[Line]:
    """Webhook endpoints disabled after failing for WEBHOOK_RETRY_HOURS: a client hears nothing
    until an operator redelivers (rummy_ledger.events)."""
    if not _can_view(user, WebhookEndpoint):
        return []
    disabled = WebhookEndpoint.objects.filter(disabled_at__isnull=False, deleted_at__isnull=True)
    shown, any_disabled = _counted(disabled)
    url = changelist(WebhookEndpoint, state="disabled")
    yours = user.has_perm("events.redeliver_delivery")
    return [Line("webhook endpoints disabled", shown, url, any_disabled, yours and any_disabled)]


WIDGETS: dict[str, list[Widget]] = {
    WAITS: [withdrawals_waiting, proposals_waiting],
    WRONG: [reconciliation_last, webhooks_disabled],
    TODAY: [money_today, real_money_mode],
}


def register(section: str, widget: Widget) -> None:
    """Add another app's lines to a section (once)."""
    if widget not in WIDGETS[section]:
        WIDGETS[section].append(widget)


def dashboard_for(user: AbstractBaseUser) -> list[tuple[str, list[Line]]]:
    """The sections with the lines this user may see, in order; sections left empty dropped."""
    sections = [(name, [line for w in WIDGETS[name] for line in w(user)]) for name in SECTIONS]
    return [(name, lines) for name, lines in sections if lines]
