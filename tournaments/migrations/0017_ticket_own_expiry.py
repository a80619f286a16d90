"""A finance ticket's own expiry: the issue proposal takes one, its tickets carry it (a
satellite's ticket keeps none: it lasts until the target's registration closes). Issues and
tickets made before it expire when their target's registration closes, as they did."""

from django.db import migrations, models

FILL = """
UPDATE tournaments_ticketissue i SET expires_at = t.registration_closes_at
  FROM tournaments_tournament t WHERE t.id = i.tournament_id;
UPDATE tournaments_ticket k SET expires_at = i.expires_at
  FROM tournaments_ticketissue i WHERE i.id = k.issue_id;
"""


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0016_tickets")]

    operations = [
        migrations.AddField(
            model_name="ticketissue",
            name="expires_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="ticket",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="ticketissue",
            name="expires_at",
            field=models.DateTimeField(
                help_text="when the tickets expire (their value back to promotions): at the "
                "latest when the tournament's registration closes"
            ),
        ),
        migrations.AddConstraint(
            model_name="ticket",
            constraint=models.CheckConstraint(
                condition=models.Q(("expires_at__isnull", True), ("source", "satellite"))
                | models.Q(("expires_at__isnull", False), ("source", "finance")),
                name="ticket_expiry_by_source",
            ),
        ),
        migrations.AddIndex(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("expires_at__isnull", False), ("status", "active")),
                fields=["expires_at"],
                name="ticket_active_expiry",
            ),
        ),
    ]
