"""The scheduler's big-cluster shortcut: the same choice as findNodesThatPassFilters +
prioritizeNodes + selectHost (scheduler.py: find_nodes_that_pass_filters, prioritize,
_add_spread), computed per block of nodes instead of per node.

Above 100 nodes genericScheduler looks at numFeasibleNodesToFind nodes (429 of 999, 549 of
4,998) for every pod, so creating a 5,000-node / 150,000-pod room visits 80 million nodes.
Between two pods of one scheduling pass only the node the last pod was bound to changes.

A node's score is its resource score R plus its SelectorSpread score, which depends on its
matching pods c and its zone, and on the window's largest c and matching pods per zone; it
falls as c grows. Each node's R and name are one integer, its key, ``R << k | (n - the name's
rank)`` (NEG when the node does not fit), so that the largest key is the best R held by the
first name, and a key plus ``score << k`` is the node's total with the same tie-break: whole
slices of nodes are compared by ``max`` in C.

The nodes (in the scheduler's order, as a ring written twice so that a window that wraps
around is one slice) are cut into blocks of BLOCK. For one kind of pod (filter signature and
non-zero requests) a BaseIndex keeps every node's key, and per block its feasible nodes, its
feasible nodes per zone (packed: _Layout.bits bits per zone in one integer) and each zone's
largest key. For a spreading owner (a Deployment's ReplicaSet) an OwnerIndex keeps every
node's group (c * z1 + the zone's number, -1 when it does not fit) and packed c, and per
block its matching pods per zone (packed) and largest c. A window is then: the nodes of the
two blocks it cuts, scored one by one (map/max), and per zone of its whole blocks the largest
key plus the zone's score at c = 0, an upper bound of the zone's totals, exact when the node
holding that key has c = 0 (the usual case): only a zone whose bound beats the best so far
and whose best key is on a node holding matching pods is looked at block by block.

Both are built once per scheduling pass (the first time a pod of that kind or owner is
scheduled; an owner's from its base and the nodes holding its pods) and kept current node by
node: a node whose NodeInfo changes is written in its layout's log (``forget``), and each index
brings the nodes logged since its last read up to date on its next read.

Used only when every node the window reaches is schedulable and untainted (the pod-only
filters pass on every node), for a pod without node selector or required node, in a pass
with at least MIN_PODS pods waiting (building a base reads every node once); anything else
(and a window with no feasible node: the FitError) takes the per-node path. Valid within one
scheduling pass: all of it dropped at the start and end of each pass (taints change between
passes, not during one)."""

from __future__ import annotations

from itertools import accumulate, chain
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .scheduler import KubeScheduler, NodeEntry, PodInfo

BLOCK = 32
NEG = -(1 << 40)  # the key of a node that does not fit: below any key plus any score
# NodeInfo vector indices and its zero (scheduler.py checks they are its own).
CPU, MEMORY, EPHEMERAL, PODS = 0, 1, 2, 3
_ZERO = (0, 0, 0, 0, 0, 0)
MAX_NODE_SCORE = 100  # scheduler.py's (it checks they are its own)
ZONE_WEIGHTING = 2.0 / 3.0
SHARED = 128  # counts whose packed terms are shared objects (_Layout.shift)
MIN_NODES = 200  # below this the window is (nearly) every node: the per-node path is as fast
MIN_PODS = 32  # fewer pods waiting: the per-node path is quicker than building a base
COLUMNS = 1 << 14  # spread columns remembered per layout
SPREADS = 1 << 14  # windows' spread scores remembered per layout


class _Layout:
    """Places over one node list, shared by every index of a pass: node places, zone
    numbers and packed-sum places, name ranks, blocks and their nodes per zone."""

    def __init__(self, nodes: list[NodeEntry], bits: int) -> None:
        n = self.n = len(nodes)
        self.nodes, self.bits, self.mask = nodes, bits, (1 << bits) - 1
        self.nb = nb = (n + BLOCK - 1) // BLOCK
        self.pos = {e[1]: i for i, e in enumerate(nodes)}
        # zone -> (its place in a packed sum, its number in a group, c << place for c below
        # SHARED: shared objects, so that adding up a window's cut reads few objects)
        self.shift: dict[str, tuple[int, int, list[int]]] = {}
        for e in nodes:
            if e[6] and e[6] not in self.shift:
                s = len(self.shift) * bits
                self.shift[e[6]] = (s, len(self.shift) + 1, [c << s for c in range(SHARED)])
        self.zones = [(s, zg) for s, zg, _ in self.shift.values()]
        self.z1 = len(self.zones) + 1
        self.zg = [self.shift[e[6]][1] if e[6] else 0 for e in nodes]  # per node
        self.one = [self.shift[e[6]][2][1] if e[6] else 0 for e in nodes]  # 1 at its place
        # per node: its zone's place and shared packed terms (None without a zone)
        self.places = [self.shift[e[6]][0] if e[6] else 0 for e in nodes]
        self.packs = [self.shift[e[6]][2] if e[6] else None for e in nodes]
        # the places of the nodes whose NodeInfo changed since the layout was made, in order
        # (forget): each index reads it on from where it last did
        self.log: list[int] = []
        # room for pods: a zone's sum fits its bits while the pods are fewer (current)
        self.room = 1 << (bits - 1)
        self.ones = [0, *accumulate(self.one + self.one)]  # their sums before each place
        self.zgs = sorted(set(self.zg))  # the zone numbers present (0: nodes without a zone)
        self.wanted = _scheduler()[1](n)  # numFeasibleNodesToFind
        self.k = n.bit_length()  # n - rank < 2**k
        self.low = (1 << self.k) - 1
        by_name = sorted(range(n), key=lambda i: nodes[i][1])
        self.inv = [0] * n  # per node: n - the rank of its name (the first name: the largest)
        self.names = [""] * (n + 1)  # by inv
        self.at = [0] * (n + 1)  # by inv: the node's place
        for rank, i in enumerate(by_name):
            self.inv[i] = n - rank
            self.names[n - rank] = nodes[i][1]
            self.at[n - rank] = i
        # block j's end, blocks numbered over the ring written twice (block nb + j is block j)
        ends = [min((j + 1) * BLOCK, n) for j in range(nb)]
        self.ends = ends + [n + e for e in ends]
        # per zone number, per block: its nodes' places, and a getter of their values (a tuple)
        self.members: list[list[list[int]]] = [[[] for _ in range(nb)] for _ in range(self.z1)]
        for i, zg in enumerate(self.zg):
            self.members[zg][i // BLOCK].append(i)
        self.getters: list[list[Callable[[list[int]], tuple[int, ...]] | None]] = [
            [itemgetter(*m, m[0]) if m else None for m in row] for row in self.members
        ]
        self.top_spread = MAX_NODE_SCORE << self.k  # the largest SelectorSpread score << k
        # (zc, max_zone, maxc) -> spread_column (windows hold alike counts: few of them)
        self.columns: dict[tuple[int, int, int], tuple[int, ...]] = {}
        # (zp, zn, maxc) -> window_spread (in a big cluster windows often repeat them); lists,
        # never changed: a window calls their __getitem__ per node (a tuple's is slower)
        self.spreads: dict[tuple[int, int, int], list[int]] = {}


class BaseIndex:
    """Per node (over the ring written twice): its key, c = 0 group (its zone's number, -1
    when it does not fit), packed 1 at its zone's place when it fits, and whether it fits;
    per block (likewise twice): feasible nodes, packed feasible nodes per zone, unschedulable
    or tainted nodes, and per zone number the largest key."""

    def __init__(self, sched: KubeScheduler, lay: _Layout, info: PodInfo, nz: tuple[int, int]):
        self.lay, self.nz = lay, nz
        self.fit = (info.cpu, info.memory, info.ephemeral, info.has_requests)
        n, nb = lay.n, lay.nb
        self.keys = [NEG] * (2 * n)
        self.g0 = [-1] * (2 * n)
        self.qs = [0] * (2 * n)
        self.ok = [0] * (2 * n)
        self.badn = [False] * n
        self.cnt = [0] * (2 * nb)
        self.zn = [0] * (2 * nb)
        self.bad = [0] * (2 * nb)
        self.best = [[NEG] * (2 * nb) for _ in range(lay.z1)]
        self.infeasible = n  # nodes that do not fit
        self.seen = len(lay.log)  # the log read up to here
        self.refresh(sched, range(n))

    def refresh(self, sched: KubeScheduler, places: Iterable[int] | None = None) -> None:
        """Bring ``places`` (by default the nodes logged since the last read) up to date (the
        per-node path's inline check of an untainted schedulable node, and its resource
        score)."""
        lay = self.lay
        if places is None:
            log = lay.log
            places = log[self.seen :]
            self.seen = len(log)
            if len(places) > 1:
                places = sorted(set(places))
        n, nb, nodes, inv, k = lay.n, lay.nb, lay.nodes, lay.inv, lay.k
        keys, ok, badn = self.keys, self.ok, self.badn
        requested, score = sched.requested, sched.resource_score
        cpu, mem, eph, has_requests = self.fit
        nzc, nzm = self.nz
        for x in places:
            entry = nodes[x]
            node = entry[0]
            b = bool(node.unschedulable or node.taints)
            if b != badn[x]:
                badn[x] = b
                j = x // BLOCK
                self.bad[j] = self.bad[j + nb] = self.bad[j] + (1 if b else -1)
            used = requested.get(entry[1], _ZERO)
            if used[PODS] < entry[5] and (
                not has_requests
                or (
                    entry[2] >= cpu + used[CPU]
                    and entry[3] >= mem + used[MEMORY]
                    and entry[4] >= eph + used[EPHEMERAL]
                )
            ):
                # (resource_score is memoised: the per-node path's cache per node would miss,
                # its entry dropped when the node changed)
                key = score(entry, nzc, nzm) << k | inv[x]
                if not ok[x]:
                    self._fits(x, 1)
            else:
                key = NEG
                if ok[x]:
                    self._fits(x, 0)
            old = keys[x]
            if key == old:
                continue
            keys[x] = keys[x + n] = key
            zg = lay.zg[x]
            arr = self.best[zg]
            j = x // BLOCK
            top = arr[j]
            if key > top:
                arr[j] = arr[j + nb] = key
            elif old == top:  # it held its zone's largest key: found again
                arr[j] = arr[j + nb] = max(lay.getters[zg][j](keys))  # type: ignore[misc]

    def _fits(self, x: int, fits: int) -> None:
        """Node x came to fit (1) or stopped fitting (0): its c = 0 group, packed 1 and
        block counts follow."""
        lay = self.lay
        n, nb, j = lay.n, lay.nb, x // BLOCK
        q = lay.one[x] if fits else -self.qs[x]
        self.ok[x] = self.ok[x + n] = fits
        self.g0[x] = self.g0[x + n] = lay.zg[x] if fits else -1
        self.qs[x] = self.qs[x + n] = q if fits else 0
        cnt, zn = self.cnt, self.zn
        cnt[j] = cnt[j + nb] = cnt[j] + (1 if fits else -1)
        zn[j] = zn[j + nb] = zn[j] + q
        self.infeasible += -1 if fits else 1


class OwnerIndex:
    """A spreading owner's view of its base: per node (over the ring written twice) its
    group (c * z1 + its zone's number, -1 when it does not fit) and packed c (c at its
    zone's place); per block (likewise twice) its packed matching pods per zone and its
    largest c."""

    def __init__(self, base: BaseIndex, counts: dict[str, int]) -> None:
        lay = self.lay = base.lay
        self.base, self.counts = base, counts
        n, nb, z1 = lay.n, lay.nb, lay.z1
        self.g = g = list(base.g0)
        self.ps = ps = [0] * (2 * n)
        self.zp = zp = [0] * (2 * nb)
        self.maxc = maxc = [0] * (2 * nb)
        # per group (c * z1 + zone number), per block: its largest key, made when a window
        # needs it (a zone whose largest key is on a node holding matching pods); per zone
        # number, per block: 1 while not made since a node of that zone there changed
        self.best: list[list[int]] = []
        self.dirty = [[1] * (2 * nb) for _ in range(z1)]
        self.seen = len(lay.log)  # the log read up to here (its base is current: made so)
        pos, ok = lay.pos, base.ok
        for name, c in counts.items():
            x = pos.get(name)
            if x is None or not c or not ok[x]:
                continue
            j = x // BLOCK
            g[x] = g[x + n] = c * z1 + lay.zg[x]
            ps[x] = ps[x + n] = p = self._packed(x, c)
            zp[j] = zp[j + nb] = zp[j] + p
            if c > maxc[j]:
                maxc[j] = maxc[j + nb] = c

    def _packed(self, x: int, c: int) -> int:
        """c at node x's zone's place in a packed sum (0 without a zone)."""
        packed = self.lay.packs[x]
        if packed is None:
            return 0
        return packed[c] if c < SHARED else c << self.lay.places[x]

    def regroup(self, j: int, zg: int) -> None:
        """Each group's largest key among zone ``zg``'s nodes in block j, made again."""
        lay = self.lay
        nb, z1, g, keys, rows = lay.nb, lay.z1, self.g, self.base.keys, self.best
        for gi in range(zg, len(rows), z1):
            rows[gi][j] = rows[gi][j + nb] = NEG
        for x in lay.members[zg][j]:
            gx = g[x]
            if gx >= 0:
                while len(rows) <= gx:  # a row of groups per count
                    rows += [[NEG] * (2 * nb) for _ in range(z1)]
                if keys[x] > rows[gx][j]:
                    rows[gx][j] = rows[gx][j + nb] = keys[x]
        self.dirty[zg][j] = self.dirty[zg][j + nb] = 0

    def refresh(self) -> None:
        """Bring the nodes logged since the last read up to date (their base is)."""
        lay = self.lay
        log = lay.log
        places = log[self.seen :]
        self.seen = len(log)
        n, nb, z1, zgn, nodes = lay.n, lay.nb, lay.z1, lay.zg, lay.nodes
        ok, counts, dirty = self.base.ok, self.counts, self.dirty
        g, ps, zp, maxc = self.g, self.ps, self.zp, self.maxc
        for x in places if len(places) < 2 else set(places):
            j = x // BLOCK
            d = dirty[zgn[x]]
            d[j] = d[j + nb] = 1
            go = g[x]
            if ok[x]:
                c = counts.get(nodes[x][1], 0)
                gn = c * z1 + zgn[x]
                p = self._packed(x, c) if c else 0
            else:
                c, gn, p = -1, -1, 0
            if p != ps[x]:
                zp[j] = zp[j + nb] = zp[j] + p - ps[x]
                ps[x] = ps[x + n] = p
            if gn != go:
                g[x] = g[x + n] = gn
                if c > maxc[j]:
                    maxc[j] = maxc[j + nb] = c
                elif go >= 0 and go // z1 == maxc[j] and c < maxc[j]:  # it held the largest
                    m = max(g[j * BLOCK : lay.ends[j]]) // z1
                    maxc[j] = maxc[j + nb] = m if m > 0 else 0


def forget(indexes: Iterable[BaseIndex | OwnerIndex], name: str) -> None:
    """Node ``name``'s NodeInfo changed: write its place in the log of each of ``indexes``'
    layouts (once for indexes over the same layout; a layout logged twice brings the node up
    to date twice, the second time changing nothing)."""
    lay: _Layout | None = None
    for idx in indexes:
        if idx.lay is not lay:
            lay = idx.lay
            i = lay.pos.get(name)
            if i is not None:
                lay.log.append(i)


_SCHEDULER: tuple[Any, Any, Any] | None = None


def _scheduler() -> tuple[Any, Any, Any]:
    """scheduler.py's nonzero_requests, num_feasible_nodes_to_find and spread_score (it
    imports this module: looked up on first use)."""
    global _SCHEDULER
    from .scheduler import nonzero_requests, num_feasible_nodes_to_find, spread_score

    _SCHEDULER = (nonzero_requests, num_feasible_nodes_to_find, spread_score)
    return _SCHEDULER


def current(
    sched: KubeScheduler, pod: Any, info: PodInfo, nodes: list[NodeEntry]
) -> tuple[BaseIndex, OwnerIndex | None] | None:
    """The base and (for a pod with a spreading owner that has pods) owner index of ``pod``,
    up to date; None: take the per-node path. The last answer is kept (``_last_window``): the
    pods of one owner come one after another, and only this changes the indexes kept."""
    nz = (_SCHEDULER or _scheduler())[0](pod)  # nonzero_requests, kept on the pod
    owner = sched._spread_owner(pod)
    counts = sched.owner_counts(owner) if owner is not None else None
    last = sched._last_window
    if last is not None and last[0] is info and last[1] == nz and last[2] == owner:
        base, idx = last[3], last[4]  # what _bases and _windows hold for them
        if (
            (idx.counts is counts if idx is not None else not counts)
            and base.lay.nodes is nodes
            and not (counts and len(sched.sim.cluster.pods) >= base.lay.room)
        ):
            log = base.lay.log
            if base.seen != len(log):
                base.refresh(sched)
            if idx is not None and idx.seen != len(log):
                idx.refresh()
            return base, idx
    got = _current(sched, info, nodes, nz, owner, counts)
    sched._last_window = None if got is None else (info, nz, owner, *got)
    return got


def _current(
    sched: KubeScheduler,
    info: PodInfo,
    nodes: list[NodeEntry],
    nz: tuple[int, int],
    owner: str | None,
    counts: dict[str, int] | None,
) -> tuple[BaseIndex, OwnerIndex | None] | None:
    """``current`` found in (or made for) _bases and _windows."""
    key = (info.signature, nz)
    bases = sched._bases
    base = bases.get(key)
    if (
        base is None
        or base.lay.nodes is not nodes
        or (counts and len(sched.sim.cluster.pods) >= base.lay.room)
    ):
        if base is None and len(sched.queue) < MIN_PODS:
            return None
        # A zone's sum in a window is at most the pods (that exist during the pass: none is
        # made in it) or the nodes: ``bits`` bits hold it, with one bit to spare (twice as
        # many), should a hook ever make pods during a pass.
        bits = (2 * max(len(sched.sim.cluster.pods), len(nodes))).bit_length()
        lay = next(
            (b.lay for b in bases.values() if b.lay.nodes is nodes and b.lay.bits == bits), None
        )
        if len(bases) >= 8:  # pods of one kind come together: keep the last few
            bases.clear()
            sched._windows.clear()  # an owner's base stays current only while kept here
        base = bases[key] = BaseIndex(sched, lay or _Layout(nodes, bits), info, nz)
    elif base.seen != len(base.lay.log):
        base.refresh(sched)
    if not counts:
        return base, None
    windows = sched._windows
    okey = (key, owner)
    idx = windows.get(okey)
    if idx is None or idx.counts is not counts or idx.base is not base:
        if len(windows) >= 4:  # pods of one owner come together: keep the last few
            windows.clear()
        idx = windows[okey] = OwnerIndex(base, counts)
    elif idx.seen != len(base.lay.log):
        idx.refresh()
    return base, idx


def spread_column(k: int, zc: int, max_zone: int, maxc: int) -> tuple[int, ...]:
    """spread_score << k of a node in a zone holding ``zc`` matching pods (``zc`` < 0: a
    node without zone) among a window's feasible nodes whose zones hold at most
    ``max_zone`` and whose nodes at most ``maxc``, per count c = 0..maxc on the node."""
    score = (_SCHEDULER or _scheduler())[2]  # spread_score
    return tuple(score(c, maxc, zc, max_zone, True) << k for c in range(maxc + 1))


def window_spread(lay: _Layout, zp: int, zn: int, maxc: int) -> list[int]:
    """DefaultPodTopologySpread.NormalizeScore for a window whose feasible nodes hold ``zp``
    matching pods and number ``zn`` per zone (packed) and at most ``maxc`` on a node: group
    (c * z1 + zone number) -> SelectorSpread score << k. Every candidate's c is at most maxc,
    its zone one of those there (with feasible nodes: DefaultPodTopologySpread counts every
    feasible node's zone, if only with 0) or none (number 0). A zone not there holds no
    candidate: its groups get the scores of a node without zone (a bound of any score).
    Remembered per layout, and so are its columns (one per zone: spread_column)."""
    spreads = lay.spreads
    got = spreads.get((zp, zn, maxc))
    if got is not None:
        return got
    mask, columns = lay.mask, lay.columns
    zcs = [-1]  # by zone number: the zone's matching pods, -1 without zone or not there
    max_zone = 0
    for sh, _zg in lay.zones:
        if (zn >> sh) & mask:
            zc = (zp >> sh) & mask
            if zc > max_zone:
                max_zone = zc
            zcs.append(zc)
        else:
            zcs.append(-1)
    cols = []
    for zc in zcs:
        key = (zc, max_zone if zc >= 0 else 0, maxc)
        col = columns.get(key)
        if col is None:
            if len(columns) >= COLUMNS:
                columns.clear()
            col = columns[key] = spread_column(lay.k, *key)
        cols.append(col)
    if len(spreads) >= SPREADS:
        spreads.clear()
    got = spreads[zp, zn, maxc] = list(chain.from_iterable(zip(*cols)))
    return got


def _extent(base: BaseIndex, start: int, wanted: int) -> tuple[int, int]:
    """Where the window from ``start`` ends (after its wanted-th feasible node, or a whole
    ring on), over the ring written twice, and the feasible nodes in it."""
    lay = base.lay
    ok, cnt, ends, limit = base.ok, base.cnt, lay.ends, start + lay.n
    need, pos = wanted, start
    j = start // BLOCK
    while pos < limit:
        end = ends[j]
        first = j * BLOCK if j < lay.nb else lay.n + (j - lay.nb) * BLOCK
        if end <= limit and pos == first and cnt[j] < need:
            need -= cnt[j]  # a whole block short of the need
        else:
            if end > limit:
                end = limit
            for p in range(pos, end):
                if ok[p]:
                    need -= 1
                    if not need:
                        return p + 1, wanted
        pos = end
        j += 1
    return limit, wanted - need


def _zone_best(idx: OwnerIndex, zg: int, ja: int, jb: int, spread: list[int]) -> int:
    """The best total of zone ``zg``'s nodes in blocks [ja, jb), from its groups' largest
    keys (made again where a node changed)."""
    nb, z1 = idx.lay.nb, idx.lay.z1
    dirty = idx.dirty[zg]
    if 1 in dirty[ja:jb]:
        for j in range(ja, jb):
            if dirty[j]:
                idx.regroup(j - nb if j >= nb else j, zg)
    rows = idx.best
    top = NEG
    for gi in range(zg, min(len(spread), len(rows)), z1):
        v = max(rows[gi][ja:jb]) + spread[gi]
        if v > top:
            top = v
    return top


def schedule_window(
    sched: KubeScheduler, pod: Any, info: PodInfo, nodes: list[NodeEntry]
) -> str | None:
    """The node genericScheduler.Schedule picks for ``pod`` (and nextStartNodeIndex moved as
    findNodesThatPassFilters moves it), or None: take the per-node path (nothing changed)."""
    got = current(sched, pod, info, nodes)
    if got is None:
        return None
    base, idx = got
    lay = base.lay
    n, nb, wanted = lay.n, lay.nb, lay.wanted
    s = sched.next_start_node_index % n
    if base.infeasible:
        e, found = _extent(base, s, wanted)
        if not found:
            return None  # the FitError: the per-node path counts the reasons
    else:
        e = s + wanted
    # The window's whole blocks [ja, jb) cover nodes [a, b); nodes [s, a) and [b, e) are cut.
    a = -(-s // BLOCK) * BLOCK
    if a >= n:
        a, ja = n, nb
    else:
        ja = a // BLOCK
    if e <= n:
        if e == n:
            b, jb = n, nb
        else:
            jb = e // BLOCK
            b = jb * BLOCK
    else:
        jb = nb + (e - n) // BLOCK
        b = n + (jb - nb) * BLOCK
    # the blocks it touches: from s's to e - 1's
    last = (e - 1) // BLOCK if e <= n else nb + (e - 1 - n) // BLOCK
    if sum(base.bad[s // BLOCK : last + 1]):
        return None  # an unschedulable or tainted node: the per-node path decides
    if a > b:  # the window lies inside one block
        a = b = e
    sched.next_start_node_index = e % n
    keys, zgs = base.keys, lay.zgs
    whole = ja < jb
    if idx is None:  # no SelectorSpread score: the resource scores alone
        top = max(keys[s:a]) if a > s else NEG
        if e > b:
            v = max(keys[b:e])
            if v > top:
                top = v
        if whole:
            for zg in zgs:
                v = max(base.best[zg][ja:jb])
                if v > top:
                    top = v
        return lay.names[top & lay.low]
    g, ps, z1 = idx.g, idx.ps, lay.z1
    # Matching pods per zone of the window's feasible nodes (a zone with feasible nodes is
    # there, if only with 0: DefaultPodTopologySpread counts every feasible node's zone), and
    # the largest count.
    zp = 0
    maxc = -1
    if a > s:
        zp = sum(ps[s:a])
        maxc = max(g[s:a])
    if e > b:
        zp += sum(ps[b:e])
        v = max(g[b:e])
        if v > maxc:
            maxc = v
    maxc //= z1
    if whole:
        zp += sum(idx.zp[ja:jb])
        v = max(idx.maxc[ja:jb])
        if v > maxc:
            maxc = v
    if maxc < 0:
        maxc = 0
    if base.infeasible:
        zn = sum(base.qs[s:a]) + sum(base.qs[b:e])
        if whole:
            zn += sum(base.zn[ja:jb])
    else:  # every node fits
        zn = lay.ones[e] - lay.ones[s]
    spread = window_spread(lay, zp, zn, maxc)
    at = spread.__getitem__  # (a node that does not fit, group -1: its key is NEG)
    top = max(map(add, keys[s:a], map(at, g[s:a]))) if a > s else NEG
    # (the best is seldom in the end cut: its largest key plus the largest score bounds it)
    if e > b and max(keys[b:e]) + lay.top_spread > top:
        v = max(map(add, keys[b:e], map(at, g[b:e])))
        if v > top:
            top = v
    if whole:
        # A zone's largest key plus its c = 0 score bounds its nodes' totals; it is the best
        # of them when the node holding it has c = 0.
        zbest, low, at_inv = base.best, lay.low, lay.at
        for zg in zgs:
            m = max(zbest[zg][ja:jb])
            v = m + spread[zg]
            if v <= top or m == NEG:
                continue
            if g[at_inv[m & low]] < z1:  # c = 0
                top = v
            else:
                v = _zone_best(idx, zg, ja, jb, spread)
                if v > top:
                    top = v
    return lay.names[top & lay.low]
