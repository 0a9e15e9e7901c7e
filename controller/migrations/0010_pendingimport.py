import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("controller", "0009_timeline_chunk")]

    operations = [
        migrations.CreateModel(
            name="PendingImport",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("text", models.TextField()),
                ("options", models.JSONField(blank=True, default=dict)),
                (
                    "room",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="pending_import",
                        to="controller.room",
                    ),
                ),
            ],
        ),
    ]
