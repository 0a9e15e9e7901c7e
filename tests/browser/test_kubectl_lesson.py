"""A lesson step that asks the class to run kubectl (issue #36): the step shows its commands as
written, each copyable, beside the room's kubeconfig (the viewer's, which reads: also on a page
without the "Use kubectl" card, such as a learner alone's); the projector shows them at 24 px
or more. Screenshots: test-artifacts/kubectl-lesson-{viewer,step,projector,solo}.png."""

from __future__ import annotations

from datetime import timedelta

import pytest

from controller.engine.scenario import load_scenario
from controller.kubeapi import auth
from controller.lessons import classroom
from controller.models import Room
from controller.rooms import catalog, create

from .conftest import ARTIFACTS
from .helpers import advance
from .test_lessons import open_page

pytestmark = pytest.mark.browser

LESSON = "27-lesson-kubectl-node-failure"
TEXT = next(s["yaml"] for s in catalog.builtin_lessons() if s["id"] == LESSON)

COMMANDS = """() => [...document.querySelectorAll("#lesson .lesson-kubectl code.cmd")].map((el) => ({
  text: el.textContent, size: parseFloat(getComputedStyle(el).fontSize),
  visible: el.getClientRects().length > 0, right: el.getBoundingClientRect().right,
  panel: document.getElementById("lesson").getBoundingClientRect().right }))"""


def _at_first_question(name: str, solo: bool = False) -> Room:
    room = create.room_create(name, TEXT, None, 100.0)
    if solo:
        classroom.make_solo(room)
    r = Room.objects.get(pk=room.pk)
    advance(r.pk, r.wall_anchor + timedelta(seconds=1))  # stops at the 60 s question
    r = Room.objects.get(pk=room.pk)
    assert (r.sim_ms, r.paused) == (60_000, True)
    return r


def test_a_kubectl_step_shows_its_commands_copyable_beside_the_kubeconfig(
    live_stack, browser, monkeypatch
) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    step = load_scenario(TEXT).lesson.steps[0]
    assert step.kubectl  # the first step lists commands
    room = _at_first_question("kubectl-lesson")
    base = f"{live_stack}/rooms/{room.slug}/"
    viewer = open_page(browser, base, 1366, 900)
    viewer.context.grant_permissions(["clipboard-read", "clipboard-write"])
    viewer.wait_for_selector(f'.lesson-question[data-checkpoint="{step.id}"]')
    got = viewer.evaluate(COMMANDS)
    assert [c["text"] for c in got] == step.kubectl
    assert all(c["visible"] and c["right"] <= c["panel"] + 1 for c in got), got
    # The kubeconfig at hand: the viewer's (it reads), with the command that points at it.
    link = viewer.locator("#lesson a.kubectl-config")
    assert link.get_attribute("href") == f"/rooms/{room.slug}/kubeconfig"
    export = viewer.locator("#lesson .kubectl-export").inner_text()
    assert export == f"export KUBECONFIG=~/Downloads/{room.slug}-viewer.kubeconfig"
    with viewer.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == f"{room.slug}-viewer.kubeconfig"
    config = download.value.path().read_text()
    assert "kind: Config" in config and f"/k8s/rooms/{room.slug}" in config
    assert auth.viewer_token(room) in config and room.operator_token not in config
    # Copy: the command as written (not the prompt the page draws before it).
    viewer.locator("#lesson .kubectl-commands li").nth(2).locator("button.copy-cmd").click()
    viewer.wait_for_function(
        "document.querySelectorAll('#lesson button.copy-cmd')[2].textContent === 'Copied'"
    )
    assert viewer.evaluate("navigator.clipboard.readText()") == step.kubectl[2]
    viewer.screenshot(path=str(ARTIFACTS / "kubectl-lesson-viewer.png"), full_page=True)
    viewer.locator("#lesson").screenshot(path=str(ARTIFACTS / "kubectl-lesson-step.png"))

    # The projector: the commands readable from the back of the room, no copy buttons.
    proj = open_page(browser, f"{base}?token={room.operator_token}&present=1", 1920, 1080)
    proj.wait_for_selector(f'.lesson-question[data-checkpoint="{step.id}"]')
    got = proj.evaluate(COMMANDS)
    assert [c["text"] for c in got] == step.kubectl
    assert all(c["visible"] and c["size"] >= 24 for c in got), got
    assert proj.locator("#lesson button.copy-cmd:visible").count() == 0
    proj.screenshot(path=str(ARTIFACTS / "kubectl-lesson-projector.png"))


def test_a_learner_alone_has_the_kubeconfig_in_the_step(live_stack, browser, monkeypatch) -> None:
    """A page for one has the step's own link to the room's kubeconfig, beside its "Use
    kubectl" card (issue #36 asks for that card on the solo page too)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    room = _at_first_question("kubectl-alone", solo=True)
    page = open_page(browser, f"{live_stack}/rooms/{room.slug}/?token={room.operator_token}")
    page.wait_for_selector("#lesson .lesson-kubectl")
    assert page.locator("#use-kubectl").count() == 1
    assert page.locator("#lesson a.kubectl-config").get_attribute("href") == (
        f"/rooms/{room.slug}/kubeconfig"
    )
    page.locator("#lesson").screenshot(path=str(ARTIFACTS / "kubectl-lesson-solo.png"))
