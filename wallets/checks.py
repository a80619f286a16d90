"""Start-up checks of the ledger's settings (Django system checks: `manage.py check`, and every
command that starts the service, refuse to run on an error)."""

from django.conf import settings
from django.core import checks

from wallets.services.regions import ALIASES, REGIONS


@checks.register(checks.Tags.compatibility)
def blocked_regions_are_regions(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """Every code of `REAL_MONEY_BLOCKED_REGIONS` is an ISO 3166-2:IN region: a typo would
    otherwise leave the state it meant open. A retired code still blocks its successor."""
    messages: list[checks.CheckMessage] = []
    for code in sorted(settings.REAL_MONEY_BLOCKED_REGIONS):
        if code in ALIASES:
            messages.append(
                checks.Warning(
                    f"REAL_MONEY_BLOCKED_REGIONS: {code} is the retired code of "
                    f"{REGIONS[ALIASES[code]]}; it blocks {ALIASES[code]}, its current code",
                    hint=f"write {ALIASES[code]}",
                    id="wallets.W001",
                )
            )
        elif code not in REGIONS:
            messages.append(
                checks.Error(
                    f"REAL_MONEY_BLOCKED_REGIONS: {code!r} is not an ISO 3166-2:IN state or "
                    "union territory code",
                    hint=(
                        "codes without IN-, e.g. TN,AP,TS (wallets/services/regions.py lists them)"
                    ),
                    id="wallets.E001",
                )
            )
    return messages
