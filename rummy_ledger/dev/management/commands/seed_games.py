"""Demo game templates: every format, in cash and in practice chips (idempotent). Between them
they play every split policy, S1's deck count that follows the players (3 decks from 4) and
Rummy 500 tables of up to 8 (two decks from 5)."""

from decimal import Decimal

from django.core.management.base import BaseCommand

from tournaments.models import GameTemplate

D = Decimal
DEMO_TEMPLATES = [
    # slug, format, seats, point value, entry fee, fee %, deals, split, rejoin, rules
    ("points-2", "points", 6, D("2.00"), None, D("15"), None, "none", False, {}),
    ("points-s1", "points", 6, D("1.00"), None, D("15"), None, "none", False, "S1"),
    ("pool-101", "pool101", 6, None, D("100.00"), D("12.5"), None, "drops", True, {}),
    ("pool-201", "pool201", 6, None, D("50.00"), D("12.5"), None, "drop_value", True, {}),
    ("deals-2", "deals", 2, None, D("5.00"), D("10"), 2, "none", False, {}),
    ("deals-3", "deals", 6, None, D("25.00"), D("10"), 3, "none", False, {}),
    ("rummy500", "rummy500", 8, None, D("20.00"), D("10"), None, "none", False, {}),
]


class Command(BaseCommand):
    help = "Create (or refresh) demo templates for every format, in cash (INR) and chips (CHP)."

    def handle(self, *args, **options):
        slugs = []
        for slug, fmt, seats, pv, fee, pct, deals, split, rejoin, rules in DEMO_TEMPLATES:
            for currency, suffix in (("INR", "cash"), ("CHP", "chips")):
                full = f"{slug}-{suffix}"
                GameTemplate.objects.update_or_create(
                    slug=full,
                    defaults={
                        "name": f"{fmt} {suffix}",
                        "format": fmt,
                        "currency": currency,
                        "seats": seats,
                        "point_value": pv,
                        "entry_fee": fee,
                        "fee_percent": pct if currency == "INR" else D("0"),
                        "deals": deals,
                        "split_policy": split,
                        "rejoin_allowed": rejoin,
                        "rules": rules,
                        "active": True,
                    },
                )
                slugs.append(full)
        if options["verbosity"]:
            self.stdout.write(f"Demo templates: {', '.join(slugs)}")
