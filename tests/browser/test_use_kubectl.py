""" "Use kubectl" on every page of a room (issue #36): a room's page, a class's (the teacher's
operator link and a viewer's), and a learner's alone (``/?solo``: they lead their own private
room, so they get the operator's kubeconfig). Each download is a kubeconfig for that room, and
a real kubectl reads the room with it. Then a terminal beside the page: ``kubectl get nodes -w``
while a node's kubelet is stopped from the page, the terminal rendered next to the room's page
in one picture (test-artifacts/kubectl-beside-page.png)."""

from __future__ import annotations

import base64
import html
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.models import ObjectView, Room
from controller.rooms import create
from tests.app.kubectl_clients import kubectls, run
from tests.app.test_kubeapi_kubectl import SCENARIO

from .conftest import ARTIFACTS
from .helpers import card, node_action, open_room

pytestmark = [pytest.mark.browser, pytest.mark.kubeapi]

LESSON = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()
KUBECTLS, MISSING = kubectls()


def _kubectl() -> str:
    if not KUBECTLS:
        pytest.skip(f"no kubectl found (missing: {', '.join(MISSING)})")
    return KUBECTLS[-1][1]


def _download(page: Any, button: str, path: Path) -> Path:
    """Open the page's "Use kubectl", press one of its buttons, keep the download."""
    if page.locator("#use-kubectl").get_attribute("open") is None:
        page.click("#use-kubectl > summary")
    with page.expect_download(timeout=20_000) as info:
        page.click(button)
    info.value.save_as(str(path))
    return path


def _check(cfg: Path, room: Room, role: str) -> None:
    """The kubeconfig is the room's (its API's path, the role's token) and kubectl lists the
    room's nodes with it; a viewer's cannot write."""
    doc = yaml.safe_load(cfg.read_text())
    server = doc["clusters"][0]["cluster"]["server"]
    assert server.startswith("https://127.0.0.1:") and server.endswith(f"/k8s/rooms/{room.slug}")
    token = doc["users"][0]["user"]["token"]
    assert (token == room.operator_token) is (role == "operator"), role
    out = run(_kubectl(), cfg, "get", "nodes")[1]
    assert out.split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], out
    names = set(ObjectView.objects.filter(room=room, kind="node").values_list("key", flat=True))
    assert names and names <= {line.split()[0] for line in out.splitlines()[1:]}, out
    can = run(_kubectl(), cfg, "auth", "can-i", "patch", "nodes")[1].strip()
    assert can.startswith("yes" if role == "operator" else "no"), (role, can)


def test_every_page_of_a_room_offers_its_kubeconfig(
    live_stack, browser, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    _kubectl()
    room = create.room_create("kubectl page", SCENARIO, None, 10.0)
    page, errors = open_room(browser, live_stack, room)
    assert "{#" not in page.locator("body").inner_text()  # no template text shown
    _check(_download(page, "#kubeconfig-operator", tmp_path / "room-op"), room, "operator")
    _check(_download(page, "#kubeconfig-viewer", tmp_path / "room-viewer"), room, "viewer")
    viewer, _ = open_room(browser, live_stack, room, operator=False)
    assert viewer.locator("#use-kubectl #kubeconfig-operator").count() == 0
    _check(_download(viewer, "#kubeconfig-viewer", tmp_path / "viewer"), room, "viewer")

    # A class: the teacher's page (the operator link) and a student's (the viewer link).
    lesson = create.room_create("kubectl class", LESSON, None, 10.0)
    teacher, _ = open_room(browser, live_stack, lesson)
    teacher.wait_for_selector("#lesson:not([hidden])", timeout=20_000)  # a lesson's page
    _check(_download(teacher, "#kubeconfig-operator", tmp_path / "teacher"), lesson, "operator")
    student, _ = open_room(browser, live_stack, lesson, operator=False)
    _check(_download(student, "#kubeconfig-viewer", tmp_path / "student"), lesson, "viewer")

    # Alone: the learner's own room, led by them: the operator's kubeconfig.
    solo = browser.new_context().new_page()
    solo.goto(f"{live_stack}/?solo")
    solo.wait_for_selector("#lesson:not([hidden])", timeout=30_000)
    mine = Room.objects.get(slug=solo.url.split("/rooms/")[1].split("/")[0])
    assert solo.locator("#viewer-link").count() == 0  # still a page for one
    _check(_download(solo, "#kubeconfig-operator", tmp_path / "solo"), mine, "operator")
    assert "-operator.kubeconfig" in solo.locator("#use-kubectl pre").inner_text()
    assert errors == []


TERMINAL = """<!doctype html><html><head><style>
body {{ margin: 0; background: #1e1e1e; }}
.bar {{ background: #3c3c3c; color: #ccc; font: 13px sans-serif; padding: 6px 12px; }}
.bar b {{ display: inline-block; width: 12px; height: 12px; border-radius: 6px; margin-right: 6px; }}
pre {{ margin: 0; padding: 12px 16px; color: #d4d4d4; font: 15px/1.45 "DejaVu Sans Mono", monospace;
      white-space: pre; }}
.prompt {{ color: #6a9955; }} .bad {{ color: #f48771; font-weight: bold; }}
</style></head><body><div class="bar"><b style="background:#ff5f56"></b><b style="background:#ffbd2e"></b><b style="background:#27c93f"></b>
kubectl against room {slug}</div><pre id="terminal">{text}</pre></body></html>"""

BESIDE = """<!doctype html><html><body style="margin:0;display:flex;background:#888;gap:4px">
<img src="data:image/png;base64,{left}" style="display:block">
<img src="data:image/png;base64,{right}" style="display:block">
</body></html>"""


def _terminal_html(slug: str, lines: list[str]) -> str:
    shown = [
        f'<span class="prompt">$ export KUBECONFIG=~/Downloads/{slug}-operator.kubeconfig</span>'
    ]
    shown.append('<span class="prompt">$ kubectl get nodes -w</span>')
    for line in lines:
        text = html.escape(line.rstrip("\n"))
        shown.append(f'<span class="bad">{text}</span>' if "NotReady" in line else text)
    return TERMINAL.format(slug=html.escape(slug), text="\n".join(shown))


def test_kubectl_get_nodes_w_beside_the_page(live_stack, browser, tmp_path, monkeypatch) -> None:
    """The picture of the README: a real ``kubectl get nodes -w`` (the newest kubectl found)
    beside the room's page, a-2's kubelet stopped from the page, both showing it NotReady."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    binary = _kubectl()
    room = create.room_create("kubectl beside", SCENARIO, None, 10.0)
    page, errors = open_room(browser, live_stack, room, viewport=(1280, 900))
    cfg = _download(page, "#kubeconfig-operator", tmp_path / "op.kubeconfig")
    page.click("#use-kubectl > summary")  # closed again: the page as one sees it
    lines: list[str] = []
    watcher = subprocess.Popen(
        [binary, "get", "nodes", "-w"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={"KUBECONFIG": str(cfg), "HOME": str(tmp_path)},
    )
    assert watcher.stdout is not None
    out_pipe = watcher.stdout

    def read() -> None:
        for line in out_pipe:
            lines.append(line)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not any(line.startswith("a-2 ") for line in lines):
            assert time.monotonic() < deadline and watcher.poll() is None, "".join(lines)
            time.sleep(0.2)
        node_action(page, "a-2", "StopKubelet")
        deadline = time.monotonic() + 90
        while not any(re.match(r"^a-2\s+NotReady\s", line) for line in lines):
            assert time.monotonic() < deadline and watcher.poll() is None, "".join(lines)
            time.sleep(0.2)
        page.wait_for_function(
            "sel => document.querySelector(sel)?.textContent.includes('Ready=Unknown')",
            arg=f"{card('a-2')} .ready-label",
            timeout=30_000,
        )
    finally:
        watcher.kill()
        watcher.wait(timeout=10)
        reader.join(timeout=10)
    out = "".join(lines)
    assert out.count("NAME") == 1 and re.search(r"^a-2\s+Ready\s", out, re.M), out
    terminal = browser.new_context(viewport={"width": 760, "height": 900}).new_page()
    terminal.set_content(_terminal_html(room.slug, lines))
    assert "a-2" in terminal.locator("#terminal").inner_text()
    left = base64.b64encode(terminal.screenshot()).decode()
    right = base64.b64encode(page.screenshot()).decode()
    beside = browser.new_context(viewport={"width": 760 + 4 + 1280, "height": 900}).new_page()
    beside.set_content(BESIDE.format(left=left, right=right))
    beside.wait_for_function("[...document.images].every((i) => i.complete && i.naturalWidth)")
    beside.screenshot(path=str(ARTIFACTS / "kubectl-beside-page.png"))
    assert errors == []
