"""A person picks the Kubernetes release on the room form and sees it on the room page."""

from __future__ import annotations

import pytest

from controller.engine.versions import CURRENT_VERSION

from .conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_the_release_chosen_on_the_form_is_in_the_room_header(live_stack, browser) -> None:
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(f"{live_stack}/")
    page.select_option("select[name=scenario]", "01-single-node-failure")
    page.select_option("select[name=kubernetes_version]", CURRENT_VERSION)
    page.click("form button[type=submit]")
    page.wait_for_selector("article.node", timeout=30_000)
    pill = page.locator("#k8s-version")
    pill.wait_for()
    page.wait_for_function(
        "v => document.getElementById('k8s-version').textContent === 'Kubernetes ' + v",
        arg=CURRENT_VERSION,
        timeout=20_000,
    )
    # The parameters panel says the release and does not offer what it removed.
    assert CURRENT_VERSION in page.locator("#params-version").inner_text()
    assert page.locator('input[name="controllerManager.podEvictionTimeout"]').is_hidden()
    assert page.locator('input[name="controllerManager.nodeMonitorGracePeriod"]').is_visible()
    assert (
        page.locator('input[name="controllerManager.nodeMonitorGracePeriod"]').get_attribute(
            "placeholder"
        )
        == "50s"
    )
    page.screenshot(path=str(ARTIFACTS / "8-version-current.png"))


def test_a_node_card_shows_its_kubelet_release_where_it_differs(live_stack, browser) -> None:
    """The upgrade lesson: a 1.32 control plane, b-1 and b-2 still on kubelet 1.30."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(f"{live_stack}/")
    page.select_option("select[name=scenario]", "26-lesson-upgrade-surprises")
    page.locator("form:has(select[name=scenario]) button[type=submit]").first.click()
    page.wait_for_selector('article.node[data-node="b-1"] .kver', timeout=30_000)
    assert page.locator('article.node[data-node="b-1"] .kver').inner_text().strip() == (
        "kubelet 1.30"
    )
    assert page.locator('article.node[data-node="b-2"] .kver').count() == 1
    assert page.locator('article.node[data-node="a-1"] .kver').count() == 0
    assert page.locator("#k8s-version").inner_text() == "Kubernetes 1.32"
    page.screenshot(path=str(ARTIFACTS / "8-version-skew.png"))
