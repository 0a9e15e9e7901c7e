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
blocks at a time (node by node in the two blocks where it starts and ends), and a node's
score is its resource score plus its group's SelectorSpread score, so the highest total and
the first name holding it come out of the group bests. Matching pods and feasible nodes per
zone are kept packed in one integer each (WindowIndex.bits bits per zone: few enough that
three zones' sums stay machine integers, which sum() adds without making objects), so that
a window adds up a block's zones in one addition.

Each spreading owner (a Deployment's ReplicaSet) has its own blocks, as its counts differ;
they start as copies of the base blocks of its kind of pod (the same filter signature and
non-zero requests with no matching pod: the same feasible nodes and resource scores, c = 0),
with the nodes that hold its pods brought up to date, so that the 150 Deployments of a
5,000-node room do not each make every block from scratch (WindowIndex.base, _block).

Used only when every node the window reaches is schedulable and untainted (the pod-only
filters pass on every node), for a pod without node selector or required node; anything else
(and a window with no feasible node: the FitError) takes the per-node path. Valid within one
scheduling pass: built lazily, a block forgotten when a node's NodeInfo changes
(KubeScheduler._node_changed), all of it at the start and end of each pass (taints change
between passes, not during one)."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .scheduler import KubeScheduler, NodeEntry, PodInfo

BLOCK = 48
# A feasible node's data: (name, resource score R, matching pods c, zone, its group (c, zone)
# as one int, c and 1 packed at its zone's place (0, 0 without a zone))
Item = tuple[str, int, int, str, int, int, int]
# A group, (c, zone), is the small int c * WindowIndex.z1 + the zone's number (1, 2...; 0 for
# a node without a zone): an index into a window's table of SelectorSpread scores.
Group = int
_C = itemgetter(2)
# NodeInfo vector indices and its zero (scheduler.py checks they are its own).
CPU, MEMORY, EPHEMERAL, PODS = 0, 1, 2, 3
_ZERO = (0, 0, 0, 0, 0, 0)
MAX_NODE_SCORE = 100  # scheduler.py's (it checks they are its own)
ZONE_WEIGHTING = 2.0 / 3.0
REBUILD = BLOCK // 4  # a block with more changed nodes is made again
SHARED = 128  # counts whose packed terms are shared objects (WindowIndex.shift)
MIN_NODES = 200  # below this the window is (nearly) every node: the per-node path is as fast


class _Block:
    __slots__ = (
        "count",
        "glist",
        "groups",
        "items",
        "maxc",
        "members",
        "ps",
        "qs",
        "stale",
        "zn",
        "zp",
    )

    def __init__(self, items: list[Item | None] | None) -> None:
        if items is None:  # filled in by copy()
            return
        self.items = items  # per node: feasible data
        self.stale: set[int] = set()  # offsets of nodes whose NodeInfo changed since
        self.glist: list[tuple[str, int, Group]] | None = None  # groups as (name, R, group)
        members: dict[Group, list[int]] = {}  # group -> offsets of its nodes
        count, maxc, groups, zp, zn = _summary(items, members)
        self.count, self.maxc, self.groups, self.members = count, maxc, groups, members
        self.zp = zp  # matching pods per zone, packed
        self.zn = zn  # feasible nodes per zone, packed
        # per node: its two packed terms (0 when it does not fit), summed for a window's cut
        self.ps = [0 if it is None else it[5] for it in items]
        self.qs = [0 if it is None else it[6] for it in items]

    def copy(self) -> _Block:
        """The same summary, sharing nothing that changes in place (members are changed in
        place; a group's best and glist are replaced, never changed)."""
        b = _Block(None)
        b.items, b.stale, b.glist = list(self.items), set(), self.glist
        b.ps, b.qs = list(self.ps), list(self.qs)
        b.count, b.maxc, b.zp, b.zn = self.count, self.maxc, self.zp, self.zn
        b.groups = dict(self.groups)
        b.members = {k: v[:] for k, v in self.members.items()}
        return b


class WindowIndex:
    """Block summaries for one kind of pod over the node list of one scheduling pass."""

    def __init__(
        self,
        nodes: list[NodeEntry],
        counts: dict[str, int] | None,
        like: WindowIndex | None,
        pods: int,
    ) -> None:
        self.nodes = nodes
        self.counts = counts
        self.blocks: list[_Block | None] = [None] * ((len(nodes) + BLOCK - 1) // BLOCK)
        # The index of the same pods with no matching pod anywhere (counts None): its blocks
        # hold the same feasible nodes and resource scores, c = 0 everywhere, so a block of
        # this index is a copy of its block with the nodes where c > 0 brought up to date.
        self.base: WindowIndex | None = None
        # A zone's sum in a window is at most the pods (that exist during the pass: none is
        # made in it) or the nodes: ``bits`` bits hold it, with one bit to spare (twice as
        # many), should a hook ever make pods during a pass.
        bits = (2 * max(pods, len(nodes))).bit_length()
        if like is not None and like.nodes is nodes and like.bits == bits:  # the same places
            self.pos, self.shift, self.zones = like.pos, like.shift, like.zones
            self.bits, self.mask, self.z1, self.wanted = like.bits, like.mask, like.z1, like.wanted
            return
        self.pos = {e[1]: i for i, e in enumerate(nodes)}
        self.bits, self.mask = bits, (1 << bits) - 1
        # zone -> (its place in a packed sum, its number in a group, c << place for c below
        # SHARED: the nodes' packed terms are shared objects, not one int object per node,
        # so that adding up a window's cut reads few distinct objects)
        self.shift: dict[str, tuple[int, int, list[int]]] = {}
        for e in nodes:
            if e[6] and e[6] not in self.shift:
                s = len(self.shift) * bits
                self.shift[e[6]] = (s, len(self.shift) + 1, [c << s for c in range(SHARED)])
        self.zones = [(s, zg) for s, zg, _ in self.shift.values()]
        self.z1 = len(self.zones) + 1
        self.wanted = _scheduler()[1](len(nodes))  # numFeasibleNodesToFind


def forget(indexes: Iterable[WindowIndex], name: str) -> None:
    """Node ``name``'s NodeInfo changed: its block in each of ``indexes`` is to be brought up
    to date (the node's place looked up once for indexes over the same node list)."""
    pos: dict[str, int] | None = None
    i: int | None = None
    for idx in indexes:
        if idx.pos is not pos:
            pos = idx.pos
            i = pos.get(name)
        if i is not None:
            b = idx.blocks[i // BLOCK]
            if b is not None:
                b.stale.add(i % BLOCK)


def _summary(
    items: list[Item | None], members: dict[Group, list[int]] | None = None
) -> tuple[int, int, dict[Group, tuple[str, int, Group]], int, int]:
    """Feasible nodes, largest count, per (c, zone) group the best R with the first name
    holding it, matching pods and feasible nodes per zone (packed) of ``items``; with
    ``members``, each group's node offsets go there too (a block's, _Block)."""
    count = maxc = zp = zn = 0
    groups: dict[Group, tuple[str, int, Group]] = {}  # group -> (first name, max R, group)
    for off, it in enumerate(items):
        if it is None:
            continue
        name, r, c, _zone, key, p, q = it
        count += 1
        if c > maxc:
            maxc = c
        zp += p
        zn += q
        g = groups.get(key)
        if g is None:
            groups[key] = (name, r, key)
            if members is not None:
                members[key] = [off]
        else:
            if members is not None:
                members[key].append(off)
            if r > g[1] or (r == g[1] and name < g[0]):
                groups[key] = (name, r, key)
    return count, maxc, groups, zp, zn


def _items(
    sched: KubeScheduler,
    idx: WindowIndex,
    entries: list[NodeEntry],
    info: PodInfo,
    nz: tuple[int, int],
    cache: dict[str, int],
) -> list[Item | None]:
    """Each node's data for the window when it passes the filters (the per-node path's
    inline check of an untainted schedulable node), else None."""
    requested, counts, shift, z1 = sched.requested, idx.counts or {}, idx.shift, idx.z1
    cpu, mem, eph, has_requests = info.cpu, info.memory, info.ephemeral, info.has_requests
    out: list[Item | None] = []
    for entry in entries:
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
            c = counts.get(name, 0)
            zone = entry[6]
            if zone:
                s, zg, packed = shift[zone]
                if c < SHARED:
                    out.append((name, r, c, zone, c * z1 + zg, packed[c], packed[1]))
                else:
                    out.append((name, r, c, zone, c * z1 + zg, c << s, packed[1]))
            else:
                out.append((name, r, c, zone, c * z1, 0, 0))
        else:
            out.append(None)
    return out


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
    lo = j * BLOCK
    if b is not None and len(b.stale) > REBUILD:
        b = None  # made again: quicker than node by node (the same summary either way)
    if b is None:
        # A spreading owner's block: a copy of its base block (kept current) with the nodes
        # holding its pods brought up to date, when both are few; else made, and given to the
        # base when none of its nodes holds a matching pod (the same data then).
        base = idx.base
        held: list[int] = []
        if base is not None:
            counts = idx.counts
            if counts:  # the nodes holding matching pods: their c is not 0
                if len(counts) < BLOCK:
                    pos = idx.pos
                    held = [
                        i - lo
                        for i in map(pos.get, counts)
                        if i is not None and lo <= i < lo + BLOCK
                    ]
                else:
                    held = [
                        off for off, e in enumerate(idx.nodes[lo : lo + BLOCK]) if e[1] in counts
                    ]
            bb = base.blocks[j]
            if bb is not None and len(bb.stale) <= REBUILD and len(held) <= REBUILD:
                bb = _block(sched, base, j, info, nz)
                if bb is None:
                    return None
                b = idx.blocks[j] = bb.copy()
                if not held:
                    return b
                b.stale.update(held)
    if b is None:
        entries = idx.nodes[lo : lo + BLOCK]
        for entry in entries:
            node = entry[0]
            if node.unschedulable or node.taints:
                return None
        b = idx.blocks[j] = _Block(_items(sched, idx, entries, info, nz, cache))
        if base is not None and not held:
            base.blocks[j] = b.copy()
        return b
    # Only the changed nodes: remove their old data, add the new; a group whose best node
    # changed is found again from its members, the largest count from the groups.
    items, nodes, groups, members = b.items, idx.nodes, b.groups, b.members
    redo: list[Group] = []
    redo_max = False
    offs = sorted(b.stale) if len(b.stale) > 1 else list(b.stale)
    b.stale.clear()
    news = _items(sched, idx, [nodes[lo + off] for off in offs], info, nz, cache)
    for off, new in zip(offs, news):
        old = items[off]
        if old == new:
            continue
        items[off] = new
        b.glist = None
        if new is None:
            b.ps[off] = b.qs[off] = 0
        else:
            b.ps[off], b.qs[off] = new[5], new[6]
        if old is not None:
            name, _r, c, _zone, key, p, q = old
            b.count -= 1
            b.zp -= p
            b.zn -= q
            mine = members[key]
            mine.remove(off)
            if not mine:
                del members[key], groups[key]
            elif groups[key][0] == name:
                redo.append(key)
            if c == b.maxc:
                redo_max = True
        if new is not None:
            name, r, c, _zone, key, p, q = new
            b.count += 1
            b.zp += p
            b.zn += q
            if c > b.maxc:
                b.maxc = c
            g = groups.get(key)
            if g is None:
                groups[key] = (name, r, key)
                members[key] = [off]
            else:
                members[key].append(off)
                if r > g[1] or (r == g[1] and name < g[0]):
                    groups[key] = (name, r, key)
    for key in redo:
        mine = members.get(key)
        if mine is None:
            continue
        best: Item | None = None
        for o in mine:
            it = items[o]
            if best is None or it[1] > best[1] or (it[1] == best[1] and it[0] < best[0]):  # type: ignore[index]
                best = it
        groups[key] = (best[0], best[1], key)  # type: ignore[index]
    if redo_max:
        b.maxc = max(groups, default=0) // idx.z1
    return b


_SCHEDULER: tuple[Any, Any] | None = None


def _scheduler() -> tuple[Any, Any]:
    """scheduler.py's nonzero_requests and num_feasible_nodes_to_find (it imports this
    module: looked up on first use)."""
    global _SCHEDULER
    from .scheduler import nonzero_requests, num_feasible_nodes_to_find

    _SCHEDULER = (nonzero_requests, num_feasible_nodes_to_find)
    return _SCHEDULER


def schedule_window(
    sched: KubeScheduler, pod: Any, info: PodInfo, nodes: list[NodeEntry]
) -> str | None:
    """The node genericScheduler.Schedule picks for ``pod`` (and nextStartNodeIndex moved as
    findNodesThatPassFilters moves it), or None: take the per-node path (nothing changed)."""
    n = len(nodes)
    nz = (_SCHEDULER or _scheduler())[0](pod)  # nonzero_requests, kept on the pod
    owner = sched._spread_owner(pod)
    counts = sched.owner_counts(owner) if owner is not None else None
    key = (info.signature, nz, owner)
    idx = sched._windows.get(key)
    if idx is None or idx.nodes is not nodes or idx.counts is not counts:
        like = next(iter(sched._windows.values()), None)
        if len(sched._windows) >= 4:  # pods of one kind come together: keep the last few
            sched._windows.clear()
        pods = len(sched.sim.cluster.pods)
        idx = sched._windows[key] = WindowIndex(nodes, counts, like, pods)
        if counts is not None:
            bases = sched._bases
            base = bases.get(key[:2])
            if base is None or base.nodes is not nodes or base.bits != idx.bits:
                if len(bases) >= 8:
                    bases.clear()
                base = bases[key[:2]] = WindowIndex(nodes, None, idx, pods)
            idx.base = base
    blocks = idx.blocks
    need = wanted = idx.wanted
    start = sched.next_start_node_index % n
    processed = 0  # nodes looked at
    cands: list[tuple[str, int, Group]] = []  # blocks' group bests (name, R, group)
    partial: list[Item] = []  # nodes of blocks the window cuts
    cuts: list[tuple[int, list[Item]]] = []  # their blocks' largest counts and their nodes
    zp = zn = 0  # matching pods and feasible nodes per zone, packed
    maxc = 0
    for lo, hi in ((start, n), (0, start)):
        pos = lo
        while pos < hi and need:
            j = pos // BLOCK
            b = blocks[j]
            if b is None or b.stale:
                b = _block(sched, idx, j, info, nz)
                if b is None:
                    return None
            bstart = j * BLOCK
            bend = bstart + BLOCK
            if bend > n:
                bend = n
            count = b.count
            if pos == bstart and bend <= hi and count < need:
                pos = bend
                if count:
                    need -= count
                    if b.maxc > maxc:
                        maxc = b.maxc
                    glist = b.glist
                    if glist is None:
                        glist = b.glist = list(b.groups.values())
                    cands += glist
                    zp += b.zp
                    zn += b.zn
                continue
            # The window cuts the block: node by node (the partial nodes are few, as most
            # of a window is whole blocks; a summary of parts of a block would be remade
            # after nearly every bind, the chosen node being near the window's start).
            stop = bend if bend < hi else hi
            seg = b.items[pos - bstart : stop - bstart]
            if b.count < bend - bstart and not all(seg):  # an infeasible node (None) in it
                seg = list(filter(None, seg))
                if len(seg) >= need:  # the window ends at the need-th feasible node here
                    stop = pos + b.items[pos - bstart : stop - bstart].index(seg[need - 1]) + 1
                    del seg[need:]
            elif len(seg) >= need:
                stop = pos + need
                del seg[need:]
            if seg:
                need -= len(seg)
                partial += seg
                zp += sum(b.ps[pos - bstart : stop - bstart])
                zn += sum(b.qs[pos - bstart : stop - bstart])
                cuts.append((b.maxc, seg))
            pos = stop
        processed += pos - lo
    found = wanted - need
    if not found:
        return None  # the FitError: the per-node path counts the reasons
    sched.next_start_node_index = (start + processed) % n
    for bmaxc, seg in cuts:
        if bmaxc > maxc:  # else none of these nodes has more
            c = max(map(_C, seg))
            if c > maxc:
                maxc = c
    if found == 1:  # the only feasible node
        return cands[0][0] if cands else partial[0][0]
    best, chosen = -1, ""
    if not counts:  # no SelectorSpread score: the resource scores alone
        for name, r, _g in cands:
            if r > best or (r == best and name < chosen):
                best, chosen = r, name
        for it in partial:
            if it[1] > best or (it[1] == best and it[0] < chosen):
                best, chosen = it[1], it[0]
        return chosen
    # Matching pods per zone of the window's feasible nodes (a zone with feasible nodes is
    # there, if only with 0: DefaultPodTopologySpread counts every feasible node's zone), then
    # its zone term of spread_score, by zone number (0.0 for a zone not there: no candidate).
    mask, parts = idx.mask, [0.0] * idx.z1
    max_zone = 0
    there = []
    for s, zg in idx.zones:
        if (zn >> s) & mask:
            zc = (zp >> s) & mask
            there.append((zg, zc))
            if zc > max_zone:
                max_zone = zc
    for zg, zc in there:
        parts[zg] = ZONE_WEIGHTING * (
            MAX_NODE_SCORE * (float(max_zone - zc) / float(max_zone)) if max_zone > 0 else 100.0
        )
    # group -> SelectorSpread score (spread_score, its node and zone terms computed once per
    # count and zone): every candidate's c is at most maxc, its zone one of those there or
    # none. A list by group when maxc is small, else a dict of the counts present.
    spread: Any = [] if maxc <= 32 else {}
    z1 = idx.z1
    for c in (
        range(maxc + 1) if maxc <= 32 else {g // z1 for _, _, g in cands} | set(map(_C, partial))
    ):
        f = MAX_NODE_SCORE * (float(maxc - c) / float(maxc)) if maxc else 100.0
        a = f * (1.0 - ZONE_WEIGHTING)
        row = [int(a + part) for part in parts]
        row[0] = int(f)  # a node without zone: spread_score(c, maxc, -1, ...)
        if maxc <= 32:
            spread += row
        else:
            cg = c * z1
            for zg, v in enumerate(row):
                spread[cg + zg] = v
    for name, r, g in cands:
        sc = r + spread[g]
        if sc > best or (sc == best and name < chosen):
            best, chosen = sc, name
    for it in partial:
        sc = it[1] + spread[it[4]]
        if sc > best or (sc == best and it[0] < chosen):
            best, chosen = sc, it[0]
    return chosen
