"""Built-in parameter presets."""

from django.db import migrations

PRESETS = [
    ("Kubernetes defaults", "v1.18 defaults: 40 s grace, 0.1 node/s, 300 s tolerations.", {}, {}, {}),
    (
        "fast failover",
        "Detect in 16 s, evict after 30 s: the usual 'faster failover' tuning (more false alarms).",
        {"nodeMonitorGracePeriod": "16s", "nodeMonitorPeriod": "2s"},
        {"nodeLeaseDurationSeconds": 16},
        {"defaultNotReadyTolerationSeconds": 30, "defaultUnreachableTolerationSeconds": 30},
    ),
    ("legacy eviction", "Taint manager off (pre-1.27 option): pods deleted after podEvictionTimeout.", {"enableTaintManager": False}, {}, {}),
]


def add(apps, schema_editor):
    Preset = apps.get_model("controller", "Preset")
    for name, description, cm, kubelet, api in PRESETS:
        Preset.objects.update_or_create(
            name=name,
            defaults={"description": description, "controller_manager": cm, "kubelet": kubelet, "api_server": api},
        )


def remove(apps, schema_editor):
    apps.get_model("controller", "Preset").objects.filter(name__in=[p[0] for p in PRESETS]).delete()


class Migration(migrations.Migration):
    dependencies = [("controller", "0001_initial")]
    operations = [migrations.RunPython(add, remove)]
