"""What the browser tests do the same way: open a room's page (as its operator or a viewer)
and wait until it shows the room, and use a node's action menu."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

CARD = 'article.node[data-node="{node}"]'


def card(node: str) -> str:
    """The selector of a node's tile."""
    return CARD.format(node=node)


def open_room(
    browser: Any,
    live_stack: str,
    room: Any,
    *,
    operator: bool = True,
    viewport: tuple[int, int] = (1400, 1000),
    wait_for: str | None = None,
    query: str = "",
    context: dict[str, Any] | None = None,
) -> tuple[Any, list[str]]:
    """A person opens ``room``'s page in a fresh browser context: the operator link (with the
    room's token) or the viewer link, then waits for ``wait_for`` (default: the first node's
    tile, or the page's "live" mark when the room shows none). Returns the page and the list
    its uncaught script errors go to."""
    width, height = viewport
    page = browser.new_context(
        viewport={"width": width, "height": height}, **(context or {})
    ).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    params = [f"token={room.operator_token}"] if operator else []
    if query:
        params.append(query)
    page.goto(f"{live_stack}/rooms/{room.slug}/" + (f"?{'&'.join(params)}" if params else ""))
    page.wait_for_selector(wait_for or "article.node, #conn.ok", timeout=20_000)
    return page, errors


def open_node_menu(page: Any, node: str) -> Any:
    """Open a node's action menu (one click on its "actions"), if it is not open: the menu."""
    menu = page.locator(f"{card(node)} details.node-menu")
    opened = f"{card(node)} details.node-menu[open] .node-actions"
    # A card repainted between the look and the click (a delta, a resync on a loaded machine)
    # may come back closed: look and click again, up to the same 10 s.
    deadline = time.monotonic() + 10
    while True:
        if menu.get_attribute("open") is None:
            page.click(f"{card(node)} details.node-menu > summary")
        try:
            page.wait_for_selector(opened, timeout=2_000)
            return menu
        except PlaywrightTimeoutError:
            if time.monotonic() > deadline:
                raise


def node_action(page: Any, node: str, fault: str) -> None:
    """An operator's node action: open the node's menu, click the action (which the menu
    offers once it applies to the node's state: the click waits for it)."""
    open_node_menu(page, node)
    page.click(f'{card(node)} button[data-fault="{fault}"]')


def menu_faults(page: Any, node: str) -> dict[str, list[str]]:
    """The node's menu as it offers it: {group: [fault types]}."""
    open_node_menu(page, node)
    return page.evaluate(
        """(sel) => Object.fromEntries([...document.querySelectorAll(sel + ' .fault-group')].map(
            (g) => [g.dataset.group,
                    [...g.querySelectorAll('button.fault')].map((b) => b.dataset.fault)]))""",
        card(node),
    )


def advance(room_id: int, wall_now: Any = None) -> Any:
    """The room ticked to ``wall_now`` (default: now) as a worker ticks it, under the room's
    Redis lock (tasks._tick_locked; tick.room_advance's callers hold it): the live stack's
    own worker ticks every running room too, and a tick without the lock that one of the
    worker's overtook is dropped (tick.Superseded). Waits up to 60 s for the lock."""
    from controller.locks import RoomLock
    from controller.rooms import tick

    deadline = time.monotonic() + 60
    while True:
        with RoomLock(room_id) as got:
            if got:
                return tick.room_advance(room_id, wall_now)
        if time.monotonic() > deadline:
            raise AssertionError(f"room {room_id}: its lock was never free for 60 s")
        time.sleep(0.05)


def paused_comparison(scenario: str, at: float) -> Any:
    """The comparison every compare test makes: ``scenario`` at the release's defaults beside
    tolerations of 30 s, paused and stepped to ``at`` simulated seconds, both sides ticked."""
    from controller.rooms import compare, controls

    c = compare.comparison_create(
        "",
        scenario,
        [
            ("default 300 s", {}),
            ("30 s", {"apiServer": {"defaultUnreachableTolerationSeconds": 30}}),
        ],
        None,
        10.0,
    )
    controls.room_control(c.left.pk, "pause", None, "test")
    controls.room_control(c.left.pk, "step", at, "test")
    for room in (c.left, c.right):
        advance(room.pk)
    return c
