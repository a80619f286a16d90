"""Month closes: a closed IST month no longer changes.

A close (maker-checker) stores every account's balance at the month's end, proven by one pass
over that month's entries from the previous close, and the digest of what it proved; from then
on the database refuses any entry dated in that month (`wallets.services.months`).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from wallets.models.double_entry import Account
from wallets.models.finance import Proposal, ProposalStatus


class MonthClose(Proposal):
    """Closing one IST month (`2026-10`), proposed by an operator, taken when an approver
    approves it."""

    approve_permission = "wallets.approve_monthclose"

    month = models.CharField(max_length=7, help_text="the IST month, YYYY-MM")
    previous = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="next_close"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    entries = models.BigIntegerField(null=True, blank=True, help_text="entries in the month")
    accounts = models.IntegerField(null=True, blank=True, help_text="closing balances stored")
    digest = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the previous digest and the balances"
    )

    class Meta(Proposal.Meta):
        verbose_name = "month close"
        permissions = [("approve_monthclose", "Can approve or reject month closes")]
        constraints = [
            *Proposal.Meta.constraints,
            models.UniqueConstraint(
                fields=["month"],
                condition=Q(status=ProposalStatus.APPROVED),
                name="monthclose_one_close_per_month",
            ),
            models.UniqueConstraint(
                fields=["month"],
                condition=Q(status=ProposalStatus.PROPOSED),
                name="monthclose_one_proposal_per_month",
            ),
            models.CheckConstraint(
                condition=Q(month__regex=r"^20\d\d-(0[1-9]|1[0-2])$"), name="monthclose_month"
            ),
        ]

    def __str__(self) -> str:
        return f"month close #{self.pk}: {self.month}"


class MonthCloseBalance(models.Model):
    """One account's balance at the end of a closed month, and what it ever received (the
    escrow checks read it)."""

    # no index of its own: the unique constraint's leads with the close. With one beside it, the
    # night after a close (before ANALYZE had seen it) read a tax account's closing balance
    # through this one, filtering the whole close (230,836 rows, 20-37 ms)
    close = models.ForeignKey(
        MonthClose, on_delete=models.PROTECT, related_name="balances", db_index=False
    )
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    currency = models.CharField(max_length=3)
    balance = models.DecimalField(max_digits=20, decimal_places=2)
    inflow = models.DecimalField(max_digits=20, decimal_places=2)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["close", "account", "currency"], name="monthclosebalance_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.balance} {self.currency}"


class MonthArchive(models.Model):
    """A closed month's entries detached from the ledger into a compressed file
    (`wallets.services.archives`): the file's checksum, its rows and the digest of the close
    they belong to, checked before the partition is dropped and again before it is restored.
    `restored_at` is set when the month is back in the ledger; the record stays."""

    close = models.ForeignKey(MonthClose, on_delete=models.PROTECT, related_name="archives")
    month = models.CharField(max_length=7, help_text="the IST month, YYYY-MM")
    path = models.CharField(max_length=500, help_text="the file, gzip of COPY text")
    sha256 = models.CharField(max_length=64, help_text="of the file as written")
    rows = models.BigIntegerField(help_text="entries in the file")
    digest = models.CharField(max_length=64, help_text="the digest of the close")
    archived_at = models.DateTimeField(auto_now_add=True)
    archived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["month"],
                condition=Q(restored_at__isnull=True),
                name="montharchive_one_in_force_per_month",
            ),
            models.CheckConstraint(
                condition=Q(month__regex=r"^20\d\d-(0[1-9]|1[0-2])$"), name="montharchive_month"
            ),
        ]

    def __str__(self) -> str:
        return f"archive of {self.month}"
