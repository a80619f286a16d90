"""The audit list: one append-only row per thing a member of staff did or tried (the migration's
trigger refuses UPDATE and DELETE, as the ledger's entries do)."""

from django.db import models


class AuditKind(models.TextChoices):
    SIGN_IN = "sign_in", "sign-in"
    SIGN_IN_FAILED = "sign_in_failed", "sign-in failed"
    SECOND_FACTOR = "second_factor", "second factor passed"
    SECOND_FACTOR_FAILED = "second_factor_failed", "second factor refused"
    SECOND_FACTOR_ENROLLED = "second_factor_enrolled", "second factor enrolled"
    SECOND_FACTOR_RESET = "second_factor_reset", "second factor reset"
    SIGN_OUT = "sign_out", "sign-out"
    PROPOSAL = "proposal", "proposal"
    APPROVAL = "approval", "approval"
    REJECTION = "rejection", "rejection"
    EXPORT = "export", "export"
    KEY_CHANGE = "key_change", "API key change"


class AuditEvent(models.Model):
    """Who (the username as it was: a renamed or deleted user keeps their history), what kind,
    on what, from where, when."""

    at = models.DateTimeField("time", db_index=True)
    kind = models.CharField(max_length=32, choices=AuditKind.choices)
    actor = models.CharField("person", max_length=150, db_index=True)
    subject = models.CharField(max_length=200, blank=True)
    detail = models.CharField(max_length=500, blank=True)
    address = models.GenericIPAddressField("from address", null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit event"
        indexes = [models.Index(fields=["kind", "at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} by {self.actor or '-'} at {self.at:%Y-%m-%d %H:%M:%S}"
