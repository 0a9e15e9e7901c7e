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
# NodeInfo vector indices and its zero (scheduler.py checks they are its own).
CPU, MEMORY, EPHEMERAL, PODS = 0, 1, 2, 3
_ZERO = (0, 0, 0, 0, 0, 0)
MIN_NODES = 200  # below this the window is (nearly) every node: the per-node path is as fast


class _Block:
    __slots__ = ("count", "glist", "groups", "items", "maxc", "stale", "zcount", "zlist", "zsum")

    def __init__(self) -> None:
        self.items: list[tuple[str, int, int, str] | None] = []  # per node: feasible data
        self.count = 0
        self.groups: dict[tuple[int, str], list[Any]] = {}  # (c, zone) -> [max R, first name]
        self.zsum: dict[str, int] = {}  # zone -> matching pods on its feasible nodes
        self.zcount: dict[str, int] = {}  # zone -> feasible nodes
        self.maxc = 0
        self.stale: set[int] = set()  # offsets of nodes whose NodeInfo changed since
        self.glist: list[tuple[str, int, int, str]] | None = None  # groups as a list
        self.zlist: list[tuple[str, int]] = []


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
            b = self.blocks[i // BLOCK]
            if b is not None:
                b.stale.add(i % BLOCK)


def _merge(groups: dict, c: int, zone: str, r: int, name: str) -> None:
    g = groups.get((c, zone))
    if g is None:
        groups[(c, zone)] = [r, name]
    elif r > g[0] or (r == g[0] and name < g[1]):
        g[0], g[1] = r, name


def _item(
    sched: KubeScheduler, idx: WindowIndex, entry: NodeEntry, info: PodInfo, nz: tuple, cache: dict
) -> tuple[str, int, int, str] | None:
    """A node's data for the window when it passes the filters (the per-node path's inline
    check of an untainted schedulable node), else None."""
    name = entry[1]
    used = sched.requested.get(name, _ZERO)
    if used[PODS] < entry[5] and (
        not info.has_requests
        or (
            entry[2] >= info.cpu + used[CPU]
            and entry[3] >= info.memory + used[MEMORY]
            and entry[4] >= info.ephemeral + used[EPHEMERAL]
        )
    ):
        r = cache.get(name)
        if r is None:
            r = cache[name] = sched.resource_score(entry, nz[0], nz[1])
        c = idx.counts.get(name, 0) if idx.counts else 0
        return (name, r, c, entry[6])
    return None


def _add(b: _Block, it: tuple[str, int, int, str]) -> None:
    name, r, c, zone = it
    b.count += 1
    if c > b.maxc:
        b.maxc = c
    _merge(b.groups, c, zone, r, name)
    if zone:
        b.zsum[zone] = b.zsum.get(zone, 0) + c
        b.zcount[zone] = b.zcount.get(zone, 0) + 1


def _block(
    sched: KubeScheduler, idx: WindowIndex, j: int, info: PodInfo, nz: tuple[int, int]
) -> _Block | None:
    """Block ``j``'s summary (built, or brought up to date for its changed nodes), or None
    when one of its nodes is unschedulable or tainted (the per-node path decides then)."""
    b = idx.blocks[j]
    if b is not None and not b.stale:
        return b
    cache = sched._resource_scores.get(nz)
    if cache is None:
        if len(sched._resource_scores) >= 16:
            sched._resource_scores.clear()
        cache = sched._resource_scores[nz] = {}
    entries = idx.nodes[j * BLOCK : (j + 1) * BLOCK]
    if b is None:
        b = _Block()
        for entry in entries:
            node = entry[0]
            if node.unschedulable or node.taints:
                return None
            it = _item(sched, idx, entry, info, nz, cache)
            b.items.append(it)
            if it is not None:
                _add(b, it)
        idx.blocks[j] = b
        return b
    # Only the changed nodes: remove their old data, add the new; a group whose best node
    # changed, and the block's largest count, are found again from the items.
    redo: set[tuple[int, str]] = set()
    redo_max = False
    for off in sorted(b.stale):
        old = b.items[off]
        new = _item(sched, idx, entries[off], info, nz, cache)
        if old == new:
            continue
        b.items[off] = new
        if old is not None:
            name, _r, c, zone = old
            b.count -= 1
            if b.groups[(c, zone)][1] == name:
                redo.add((c, zone))
            if c == b.maxc:
                redo_max = True
            if zone:
                b.zsum[zone] -= c
                b.zcount[zone] -= 1
                if not b.zcount[zone]:
                    del b.zsum[zone], b.zcount[zone]
        if new is not None:
            _add(b, new)
    b.stale.clear()
    b.glist = None
    for key in redo:
        best = None
        for it in b.items:
            if it is not None and (it[2], it[3]) == key:
                if best is None or it[1] > best[0] or (it[1] == best[0] and it[0] < best[1]):
                    best = [it[1], it[0]]
        if best is None:
            del b.groups[key]
        else:
            b.groups[key] = best
    if redo_max:
        b.maxc = max((it[2] for it in b.items if it is not None), default=0)
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
    cands: list[tuple[str, int, int, str]] = []  # blocks' group bests (name, R, c, zone)
    partial: list[tuple[str, int, int, str]] = []  # nodes of blocks the window cuts
    zl: list[tuple[str, int]] = []  # blocks' matching pods per zone
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
                    if b.glist is None:
                        b.glist = [(nm, r, c, z) for (c, z), (r, nm) in b.groups.items()]
                        b.zlist = list(b.zsum.items())
                    cands += b.glist
                    zl += b.zlist
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
                if not found:
                    first = it[0]
                found += 1
                partial.append(it)
                need -= 1
                if not need:
                    break
    if not found:
        return None  # the FitError: the per-node path counts the reasons
    sched.next_start_node_index = (start + processed) % n
    if found == 1:
        return first
    if not counts:  # no SelectorSpread score: the resource scores alone
        best, chosen = -1, ""
        for name, r, _c, _zone in cands + partial:
            if r > best or (r == best and name < chosen):
                best, chosen = r, name
        return chosen
    zsum: dict[str, int] = {}
    for z, zc in zl:
        zsum[z] = zsum.get(z, 0) + zc
    for _name, _r, c, zone in partial:
        if zone:
            zsum[zone] = zsum.get(zone, 0) + c
        if c > maxc:
            maxc = c
    max_zone = max(zsum.values(), default=0)
    zone_part = {
        z: ZONE_WEIGHTING
        * (MAX_NODE_SCORE * (float(max_zone - zc) / float(max_zone)) if max_zone > 0 else 100.0)
        for z, zc in zsum.items()
    }
    spread: dict[tuple[int, str], int] = {}  # (c, zone) -> SelectorSpread score
    best, chosen = -1, ""
    for name, r, c, zone in cands + partial:
        k = spread.get((c, zone))
        if k is None:
            if not zsum:
                k = spread_score(c, maxc, -1, max_zone, False)
            elif not zone:
                k = spread_score(c, maxc, -1, max_zone, True)
            else:
                f = MAX_NODE_SCORE * (float(maxc - c) / float(maxc)) if maxc else 100.0
                k = int(f * (1.0 - ZONE_WEIGHTING) + zone_part[zone])
            spread[(c, zone)] = k
        sc = r + k
        if sc > best or (sc == best and name < chosen):
            best, chosen = sc, name
    return chosen
