"""Wall time of each phase of building a big room (no profiler): parse + validate, engine
t=0 (object creation, scheduling, first node statuses), storing the first rows, the first
snapshot. ``.venv/bin/python scripts/build_phases.py 1000 30000``"""

import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from controller.bench import build as bench_build  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)
n, p = int(sys.argv[1]), int(sys.argv[2])
row = bench_build.build_phases(n, p)
print(row, "load", os.getloadavg())
if "-v" in sys.argv:
    print(Counter(row.get("event_types", {})).most_common(10))
