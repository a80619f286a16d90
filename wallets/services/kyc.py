"""KYC as the payment gateway reports it: a PAN and whether it was verified.

Every report is kept (`KycRecord`); the player's current PAN and status are the latest that
counts. Decisions of this project:
- a verified PAN belongs to one player only; verifying it for a second player is a 409 naming
  the first (the database's unique constraint is the backstop under concurrency);
- a verified player's PAN is not replaced by another verified PAN (409): TDS is filed under it.
  The gateway first reports the old PAN rejected, then the new one verified;
- a rejection of the player's verified PAN revokes it: the status becomes `rejected`, new
  withdrawals are refused (`kyc_required`) and the PAN is free for another player. A rejection
  of some other PAN leaves a verified one as it is (it is only recorded);
- the reference is the report's natural key: the same reference with the same content is the
  same report, with other content a conflict. A KYC report registers an unknown player, like a
  deposit does.
"""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import DomainError
from wallets.errors import IdempotencyConflict, PanConflict, PanInvalid
from wallets.models import KycRecord, KycStatus, Player
from wallets.services.client_guards import player_client_link
from wallets.services.players import player_lock
from wallets.services.real_money import region_report

PAN = re.compile(r"^[A-Z]{5}[0-9]{4}[A-Z]$")
# What the API takes (its OpenAPI pattern too): ASCII only, lower case read as upper, nothing
# around it (`.strip().upper()` took spaces, and a dotless i or a long s, which upper-case to I
# and S).
PAN_INPUT = r"[A-Za-z]{5}[0-9]{4}[A-Za-z]"


def pan_checked(pan: str) -> str:
    """Five letters, four digits, one letter (`ABCDE1234F`); lower case is taken as upper."""
    normal = pan.upper() if re.fullmatch(PAN_INPUT, pan or "") else ""
    if not PAN.match(normal):
        raise PanInvalid(
            f"{pan!r} is not a PAN: five letters, four digits, one letter (ABCDE1234F)",
            details={"pan": pan},
        )
    return normal


@transaction.atomic
def kyc_report(
    *,
    player_external_id: str,
    pan: str,
    status: str,
    reference: str,
    region: str = "",
    changed_by: str = "",
    client: ApiClient | None = None,
) -> tuple[KycRecord, bool]:
    """Record a KYC result and update the player's current KYC (and region, when given: the
    real-money switch reads it); returns (record, created)."""
    pan = pan_checked(pan)
    if status not in (KycStatus.VERIFIED, KycStatus.REJECTED):
        raise DomainError(f"a KYC status is verified or rejected, not {status!r}")
    player = player_lock(external_id=player_external_id, create=True)
    if client is not None:
        player_client_link(player=player, client=client)
    stored = KycRecord.objects.filter(reference=reference).first()
    if stored is not None:
        if (stored.player_id, stored.pan, stored.status) != (player.pk, pan, status):
            raise IdempotencyConflict(
                f"KYC reference {reference!r} was already used for another report",
                details={"reference": reference},
            )
        return stored, False
    if _verified_for_another(player, pan):
        raise _pan_taken(pan)  # a rejection carrying it is not kept either: it names its holder
    if status == KycStatus.VERIFIED:
        _verify(player, pan)
    elif player.kyc_status != KycStatus.VERIFIED or player.pan == pan:
        player.kyc_status, player.pan = KycStatus.REJECTED, pan
    player.kyc_updated_at = timezone.now()
    try:
        with transaction.atomic():
            player.save(update_fields=["kyc_status", "pan", "kyc_updated_at"])
            record = KycRecord.objects.create(
                player=player, pan=pan, status=status, reference=reference
            )
    except IntegrityError as exc:  # a concurrent report won the race: answer as if it had
        raise _raced(exc, pan=pan, reference=reference) from exc
    if region:
        region_report(player=player, region=region, changed_by=changed_by)
    return record, True


def _verify(player: Player, pan: str) -> None:
    if player.kyc_status == KycStatus.VERIFIED and player.pan != pan:
        raise PanConflict(
            f"player {player.external_id} is verified with another PAN; report it rejected "
            "before verifying a new one",
            details={"player": player.external_id},
        )
    player.kyc_status, player.pan = KycStatus.VERIFIED, pan


def _verified_for_another(player: Player, pan: str) -> bool:
    others = Player.objects.filter(pan=pan, kyc_status=KycStatus.VERIFIED).exclude(pk=player.pk)
    return others.exists()


def _pan_taken(pan: str) -> PanConflict:
    """The PAN is in use: which player holds it (perhaps another client's) is not said."""
    return PanConflict(
        f"PAN {pan} is verified for another player: a PAN belongs to one player",
        details={"pan": pan},
    )


def _raced(exc: IntegrityError, *, pan: str, reference: str) -> Exception:
    constraint = getattr(getattr(exc.__cause__, "diag", None), "constraint_name", "") or ""
    if "pan" in constraint:
        return _pan_taken(pan)
    return IdempotencyConflict(
        f"KYC reference {reference!r} was already used for another report",
        details={"reference": reference},
    )
