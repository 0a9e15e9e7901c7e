"""The scheduler's big-cluster shortcut: the same choice as findNodesThatPassFilters +
prioritizeNodes + selectHost (scheduler.py: find_nodes_that_pass_filters, prioritize,
_add_spread), computed per block of nodes instead of per node.

Above 100 nodes genericScheduler looks at numFeasibleNodesToFind nodes (420 of 1,000, 500 of
5,000) for every pod, so creating a 5,000-node / 150,000-pod room visits 75 million nodes.
Between two pods of one scheduling pass only the node the last pod was bound to changes, so
the nodes are cut into blocks of BLOCK, and each block keeps, for one kind of pod (its filter
signature, its non-zero requests and its spreading owner): which of its nodes fit, and per
(matching pods on the node, zone) group the best resource score with the first node name
holding it, plus its matching pods per zone. A pod's window of feasible nodes is read whole
blocks at a time, and a node's score is its resource score plus its group's SelectorSpread
score, so the highest total and the first name holding it come out of the group bests.

Used only when every node the window reaches is schedulable and untainted (the pod-only
filters pass on every node), for a pod without node selector or required node; anything else
(and a window with no feasible node: the FitError) takes the per-node path. Valid within one
scheduling pass: built lazily, a block forgotten when a node's NodeInfo changes
(KubeScheduler._node_changed), all of it at the start and end of each pass (taints change
between passes, not during one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scheduler import KubeScheduler, NodeEntry, PodInfo

BLOCK = 48
MIN_NODES = 200  # below this the window is (nearly) every node: the per-node path is as fast


class _Block:
    __slots__ = ("count", "groups", "items", "maxc", "zsum")

    def __init__(self) -> None:
        self.items: list[tuple[str, int, int, str] | None] = []  # per node: feasible data
        self.count = 0
        self.groups: dict[tuple[int, str], list[Any]] = {}  # (c, zone) -> [max R, first name]
        self.zsum: dict[str, int] = {}
        self.maxc = 0


class WindowIndex:
    """Block summaries for one kind of pod over the node list of one scheduling pass."""

    def __init__(self, nodes: list[NodeEntry], counts: dict[str, int] | None) -> None:
        self.nodes = nodes
        self.counts = counts
        self.pos = {e[1]: i for i, e in enumerate(nodes)}
        self.blocks: list[_Block | None] = [None] * ((len(nodes) + BLOCK - 1) // BLOCK)

    def forget(self, name: str) -> None:
        i = self.pos.get(name)
        if i is not None:
            self.blocks[i // BLOCK] = None


def _merge(groups: dict, zsum: dict, c: int, zone: str, r: int, name: str) -> None:
    g = groups.get((c, zone))
    if g is None:
        groups[(c, zone)] = [r, name]
    elif r > g[0] or (r == g[0] and name < g[1]):
        g[0], g[1] = r, name
    if zone:
        zsum[zone] = zsum.get(zone, 0) + c


def _block(
    sched: KubeScheduler, idx: WindowIndex, j: int, info: PodInfo, nz: tuple[int, int]
) -> _Block | None:
    """Block ``j``'s summary (computed if forgotten), or None when one of its nodes is
    unschedulable or tainted (the per-node path decides then)."""
    b = idx.blocks[j]
    if b is not None:
        return b
    from .scheduler import _ZERO, CPU, EPHEMERAL, MEMORY, PODS

    b = _Block()
    requested = sched.requested
    cpu, mem, eph, has_requests = info.cpu, info.memory, info.ephemeral, info.has_requests
    cache = sched._resource_scores.get(nz)
    if cache is None:
        if len(sched._resource_scores) >= 16:
            sched._resource_scores.clear()
        cache = sched._resource_scores[nz] = {}
    cget = idx.counts.get if idx.counts else None
    groups, zsum = b.groups, b.zsum
    for entry in idx.nodes[j * BLOCK : (j + 1) * BLOCK]:
        node = entry[0]
        if node.unschedulable or node.taints:
            return None
        name = entry[1]
        used = requested.get(name, _ZERO)
        if used[PODS] < entry[5] and (
            not has_requests
            or (
                entry[2] >= cpu + used[CPU]
                and entry[3] >= mem + used[MEMORY]
                and entry[4] >= eph + used[EPHEMERAL]
            )
        ):
            r = cache.get(name)
            if r is None:
                r = cache[name] = sched.resource_score(entry, nz[0], nz[1])
            c = cget(name, 0) if cget else 0
            zone = entry[6]
            b.items.append((name, r, c, zone))
            b.count += 1
            if c > b.maxc:
                b.maxc = c
            _merge(groups, zsum, c, zone, r, name)
        else:
            b.items.append(None)
    idx.blocks[j] = b
    return b


def schedule_window(
    sched: KubeScheduler, pod: Any, info: PodInfo, nodes: list[NodeEntry]
) -> str | None:
    """The node genericScheduler.Schedule picks for ``pod`` (and nextStartNodeIndex moved as
    findNodesThatPassFilters moves it), or None: take the per-node path (nothing changed)."""
    from .scheduler import (
        MAX_NODE_SCORE,
        ZONE_WEIGHTING,
        nonzero_pod_request,
        num_feasible_nodes_to_find,
        spread_score,
    )

    n = len(nodes)
    nz = (nonzero_pod_request(pod, "cpu"), nonzero_pod_request(pod, "memory"))
    owner = sched._spread_owner(pod)
    counts = sched._spread_counts(pod) if owner is not None else None
    key = (info.signature, nz, owner)
    idx = sched._windows.get(key)
    if idx is None or idx.nodes is not nodes or idx.counts is not counts:
        if len(sched._windows) >= 4:  # pods of one kind come together: keep the last few
            sched._windows.clear()
        idx = sched._windows[key] = WindowIndex(nodes, counts)
    need = num_feasible_nodes_to_find(n)
    start = sched.next_start_node_index % n
    processed = found = 0
    first = ""
    groups: dict[tuple[int, str], list[Any]] = {}
    zsum: dict[str, int] = {}
    maxc = 0
    for lo, hi in ((start, n), (0, start)):
        pos = lo
        while pos < hi and need:
            j = pos // BLOCK
            b = _block(sched, idx, j, info, nz)
            if b is None:
                return None
            bstart = j * BLOCK
            bend = min(bstart + BLOCK, n)
            if pos == bstart and bend <= hi and b.count < need:
                processed += bend - bstart
                if b.count:
                    if not found:
                        first = next(it for it in b.items if it is not None)[0]
                    found += b.count
                    need -= b.count
                    if b.maxc > maxc:
                        maxc = b.maxc
                    for gk, (r, name) in b.groups.items():
                        g = groups.get(gk)
                        if g is None:
                            groups[gk] = [r, name]
                        elif r > g[0] or (r == g[0] and name < g[1]):
                            g[0], g[1] = r, name
                    for z, zc in b.zsum.items():
                        zsum[z] = zsum.get(z, 0) + zc
                pos = bend
                continue
            items = b.items
            end = min(bend, hi)
            while pos < end:
                it = items[pos - bstart]
                pos += 1
                processed += 1
                if it is None:
                    continue
                name, r, c, zone = it
                if not found:
                    first = name
                found += 1
                if c > maxc:
                    maxc = c
                g = groups.get((c, zone))
                if g is None:
                    groups[(c, zone)] = [r, name]
                elif r > g[0] or (r == g[0] and name < g[1]):
                    g[0], g[1] = r, name
                if zone:
                    zsum[zone] = zsum.get(zone, 0) + c
                need -= 1
                if not need:
                    break
    if not found:
        return None  # the FitError: the per-node path counts the reasons
    sched.next_start_node_index = (start + processed) % n
    if found == 1:
        return first
    if counts:
        max_zone = max(zsum.values(), default=0)
        zone_part = {
            z: ZONE_WEIGHTING
            * (MAX_NODE_SCORE * (float(max_zone - zc) / float(max_zone)) if max_zone > 0 else 100.0)
            for z, zc in zsum.items()
        }
        best, chosen = -1, ""
        for (c, zone), (r, name) in groups.items():
            if not zsum:
                s = r + spread_score(c, maxc, -1, max_zone, False)
            elif not zone:
                s = r + spread_score(c, maxc, -1, max_zone, True)
            else:
                f = MAX_NODE_SCORE * (float(maxc - c) / float(maxc)) if maxc else 100.0
                s = r + int(f * (1.0 - ZONE_WEIGHTING) + zone_part[zone])
            if s > best or (s == best and name < chosen):
                best, chosen = s, name
        return chosen
    best, chosen = -1, ""
    for r, name in groups.values():
        if r > best or (r == best and name < chosen):
            best, chosen = r, name
    return chosen
