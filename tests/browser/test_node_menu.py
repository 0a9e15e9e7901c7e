"""Every node action from its card's menu, each checked by what the page then shows; and the
presenter view a teacher puts on the projector."""

from __future__ import annotations

import pytest

from controller.rooms import controls, create

from .conftest import ARTIFACTS
from .helpers import CARD, card, menu_faults, node_action, open_node_menu, open_room

pytestmark = pytest.mark.browser

NODES = [f"n-{i}" for i in range(1, 15)]
SCENARIO = (
    """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: menu}
spec:
  kubernetesVersion: "1.34"
  nodes:
"""
    + "".join(f"    - {{name: {n}, zone: z}}\n" for n in NODES)
    + """
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: leaky, namespace: default}
      spec: {nodeName: n-11, containers: [{name: app}]}
"""
)

# (node, actions in order, a JavaScript condition on the card (el) that the page then shows)
CASES = [
    ("n-1", ["StopKubelet"], "el.querySelector('.kstate')?.textContent.includes('Stopped')"),
    ("n-2", ["StopKubelet", "StartKubelet"], "!el.querySelector('.kstate')"),
    ("n-3", ["PartitionNode"], "el.querySelector('.kstate')?.textContent.includes('Partitioned')"),
    ("n-4", ["PartitionNode", "HealNode"], "!el.querySelector('.kstate')"),
    ("n-5", ["PowerOffNode"], "el.querySelector('.kstate')?.textContent.includes('PoweredOff')"),
    ("n-6", ["PowerOffNode", "PowerOnNode"], "!el.querySelector('.kstate')"),
    ("n-7", ["SetNodeNotReady"], "el.querySelector('.ready-label').textContent === 'Ready=False'"),
    (
        "n-8",
        ["SetNodeNotReady", "SetNodeReady"],
        "el.querySelector('.ready-label').textContent === 'Ready=True'",
    ),
    ("n-9", ["Cordon"], "el.classList.contains('cordoned')"),
    ("n-10", ["Cordon", "Uncordon"], "!el.classList.contains('cordoned')"),
    (
        "n-11",
        ["LeakMemory"],
        "document.querySelector('#timeline').textContent.includes('LeakMemory')",
    ),
    ("n-12", ["FillDisk"], "document.querySelector('#timeline').textContent.includes('FillDisk')"),
    ("n-11", ["StopLeak"], "document.querySelector('#timeline').textContent.includes('StopLeak')"),
    ("n-13", ["DeleteNode"], "el === null"),
]


@pytest.fixture
def room(live_stack):
    room = create.room_create("menu", SCENARIO, None, 1.0)
    controls.room_control(room.pk, "pause", None, "test")
    return room


def test_every_node_action_from_its_menu_shows_on_the_page(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, viewport=(1280, 800), wait_for=card("n-14"))
    # One click opens a card's menu; its actions are not on the card until then.
    assert page.locator(f'{card("n-1")} button[data-fault="StopKubelet"]').is_hidden()
    open_node_menu(page, "n-1")
    page.screenshot(path=str(ARTIFACTS / "11-node-menu.png"))
    for node, actions, shows in CASES:
        for action in actions:
            node_action(page, node, action)
            page.wait_for_timeout(200)
            page.click('button[data-ctl="step"]')  # the paused room applies it, 10 s on
        page.wait_for_function(
            f"(() => {{ const el = document.querySelector('{CARD.format(node=node)}'); "
            f"return {shows}; }})()",
            timeout=20_000,
        )
    assert errors == []


# What each menu offers once the node is in that state: {group: [faults]} (faultmenu.js).
RUNNING = {
    "Kubelet and power": ["StopKubelet", "PartitionNode", "ShutdownNode", "PowerOffNode"],
    "Container runtime": ["SetNodeNotReady"],
    "Scheduling": ["Cordon"],
    "Resources": ["LeakMemory", "FillDisk"],
    "Remove": ["DeleteNode"],
}


def test_a_node_menu_offers_only_the_faults_that_apply_grouped(live_stack, room, browser) -> None:
    page, errors = open_room(browser, live_stack, room, wait_for=card("n-14"))
    assert menu_faults(page, "n-1") == RUNNING
    # Stopped: start it, not stop it again; not Ready yet, so not out-of-service either.
    node_action(page, "n-1", "StopKubelet")
    page.click('button[data-ctl="step"]')
    page.wait_for_selector(f"{card('n-1')} .kstate", timeout=20_000)
    stopped = menu_faults(page, "n-1")
    assert stopped["Kubelet and power"] == ["StartKubelet", "ShutdownNode", "PowerOffNode"]
    assert "Container runtime" not in stopped
    page.locator(card("n-1")).screenshot(path=str(ARTIFACTS / "11-node-menu-stopped.png"))
    # Powered off and Unknown (1.34: 50 s): power on, and the non-graceful shutdown's taint.
    node_action(page, "n-1", "PowerOffNode")
    for _ in range(7):
        page.click('button[data-ctl="step"]')
        page.wait_for_timeout(100)
    page.wait_for_selector(f"{card('n-1')}.unknown", timeout=20_000)
    assert menu_faults(page, "n-1") == {
        "Power": ["PowerOnNode"],
        "Scheduling": ["Cordon", "OutOfService"],
        "Remove": ["DeleteNode"],
    }
    page.locator(card("n-1")).screenshot(path=str(ARTIFACTS / "11-node-menu-powered-off.png"))
    # Cordoned: uncordon, never both.
    node_action(page, "n-2", "Cordon")
    page.click('button[data-ctl="step"]')
    page.wait_for_selector(f"{card('n-2')}.cordoned", timeout=20_000)
    assert menu_faults(page, "n-2")["Scheduling"] == ["Uncordon"]
    assert errors == []


def test_presenter_view_dims_calm_nodes_and_highlights_the_broken_one(
    live_stack, room, browser
) -> None:
    page, _ = open_room(browser, live_stack, room, viewport=(1280, 800), wait_for=card("n-14"))
    node_action(page, "n-2", "StopKubelet")
    page.click('button[data-ctl="step"]')
    page.wait_for_selector(f"{CARD.format(node='n-2')} .kstate", timeout=20_000)
    page.keyboard.press("p")
    assert "presenter" in (page.locator("body").get_attribute("class") or "")
    assert "present=1" in page.url
    calm = page.locator(CARD.format(node="n-1"))
    broken = page.locator(CARD.format(node="n-2"))
    assert "calm" in calm.get_attribute("class") and "calm" not in broken.get_attribute("class")
    # The computed opacity of the cards as painted once the presenter view is on (read in the
    # page, where a repaint cannot detach the card between the look-up and the read).
    opacity = (
        "(sel) => { const el = document.querySelector(sel);"
        " return el ? parseFloat(getComputedStyle(el).opacity) : null; }"
    )
    page.wait_for_function(f"() => ({opacity})('{CARD.format(node='n-1')}') < 0.5", timeout=5_000)
    assert page.evaluate(opacity, CARD.format(node="n-1")) < 0.5
    assert page.evaluate(opacity, CARD.format(node="n-2")) == 1.0
    page.screenshot(path=str(ARTIFACTS / "12-presenter.png"))
    page.click("#presenter")
    assert "presenter" not in (page.locator("body").get_attribute("class") or "")


def test_the_room_reads_on_a_tablet(live_stack, room, browser) -> None:
    page, _ = open_room(
        browser, live_stack, room, operator=False, viewport=(820, 1180), wait_for=card("n-14")
    )
    # One column: nothing wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 820
    # A viewer's zone header has no buttons, and no stray "null" where they would be.
    assert not page.locator(".zone-head").first.inner_text().endswith("null")
    page.screenshot(path=str(ARTIFACTS / "13-tablet.png"))
