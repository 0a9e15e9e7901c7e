from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("controller", "0007_room_creator_idle_since")]

    operations = [
        migrations.AddField(
            model_name="room",
            name="build_state",
            field=models.CharField(
                choices=[("building", "building"), ("live", "live"), ("failed", "failed")],
                default="live",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="room",
            name="build_progress",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="room",
            name="build_error",
            field=models.TextField(blank=True),
        ),
    ]
