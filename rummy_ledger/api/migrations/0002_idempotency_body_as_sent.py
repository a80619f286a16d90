"""A replay answers the stored body byte for byte: the response is kept as the text sent, not as
jsonb (which orders keys its own way). Records stored before keep jsonb's rendering, which is
what their replays already answered."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("api", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord", name="body", field=models.TextField(null=True)
        ),
        migrations.RunSQL(
            "UPDATE api_idempotencyrecord SET body = response::text WHERE response IS NOT NULL",
            migrations.RunSQL.noop,
        ),
        migrations.RemoveField(model_name="idempotencyrecord", name="response"),
    ]
