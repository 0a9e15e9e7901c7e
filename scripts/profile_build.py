"""Profile the creation of a big room (issue #14, "Fast big rooms"): cProfile of
create.room_create on a scenario of N nodes / P pods (controller.bench.build.big_room_text).

    DATABASE_URL=sqlite:////tmp/fb.sqlite3 .venv/bin/python scripts/profile_build.py 1000 30000
"""

import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from controller.bench import build as bench_build  # noqa: E402
from controller.models import Room  # noqa: E402
from controller.rooms import create  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)
n, p = int(sys.argv[1]), int(sys.argv[2])
text = bench_build.big_room_text(n, p)
print("scenario bytes", len(text))
Room.objects.filter(slug__startswith="big").delete()
prof = cProfile.Profile()
t0 = time.perf_counter()
prof.enable()
room = create.room_create("big", text, None, 10.0)
prof.disable()
print("room_create s", round(time.perf_counter() - t0, 2), "load", os.getloadavg())
st = pstats.Stats(prof)
st.sort_stats("cumulative").print_stats(int(os.environ.get("TOP", "45")))
st.sort_stats("tottime").print_stats(25)
