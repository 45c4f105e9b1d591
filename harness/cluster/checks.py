"""The cluster test's pure logic: the contract's hashes and the checks, on recorded data.

Nothing here starts a process or opens a socket, so every function can be tried on synthetic
data (`cluster_test.py --selftest` does). The contract (docs/scaling.md):
  partition(address)  = fnv1a64(6 address bytes, most significant first) % partitions
  owner(p, live)      = the live instance with the largest fnv1a64(utf8(instance) + b"/" + p as 4 bytes BE)
"""

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a64(data):
    h = FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * FNV_PRIME) & MASK64
    return h


def address_bytes(address):
    """'A1:B2:C3:D4:E5:F6', 'A1B2C3D4E5F6' or an int (48 bits) -> 6 bytes, most significant first."""
    if isinstance(address, int):
        return address.to_bytes(6, "big")
    return bytes.fromhex(address.replace(":", "").replace("-", ""))


def partition_of(address, partitions):
    return fnv1a64(address_bytes(address)) % partitions


def fmix64(k):
    """MurmurHash3's 64-bit finalizer: every input bit affects every output bit."""
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k


# An instance's score for a partition, as the bridge computes it (Sources/Bridge/Cluster/
# Partitioning.swift): FNV-1a 64 of utf8(instance) + b"/" + the partition as 4 bytes
# big-endian, then MurmurHash3's fmix64 finalizer. Without the finalizer one instance has the
# largest score for every partition (the partition's bytes come last and move only the low
# bits), and rendezvous hashing would spread nothing.
def score(instance, partition):
    return fmix64(fnv1a64(instance.encode("utf-8") + b"/" + partition.to_bytes(4, "big")))


def rendezvous_owner(partition, instances):
    """The instance rendezvous hashing gives `partition` among `instances` (None when empty)."""
    best, best_score = None, -1
    for name in sorted(instances):
        score_ = score(name, partition)
        if score_ > best_score:
            best, best_score = name, score_
    return best


def rendezvous_map(partitions, instances):
    return {p: rendezvous_owner(p, instances) for p in range(partitions)}


def balance_problem(partitions, instances):
    """None when rendezvous gives every instance between half and twice its fair share of
    partitions, else a description."""
    counts = {i: len(share(partitions, instances, i)) for i in instances}
    fair = partitions / len(instances)
    if all(fair / 2 <= c <= fair * 2 for c in counts.values()):
        return None
    return f"partitions per instance {counts} (fair share {fair:.1f})"


def share(partitions, instances, instance):
    """The partitions rendezvous gives `instance` among `instances`."""
    return sorted(p for p, owner in rendezvous_map(partitions, instances).items() if owner == instance)


def partition_lists_problems(lists, partitions):
    """`lists`: {instance: [partitions]} from the online bridge/instances/* topics. Returns a list
    of problems (empty when the lists are disjoint and cover 0..partitions-1)."""
    seen = {}
    problems = []
    for instance in sorted(lists):
        for p in lists[instance]:
            if not isinstance(p, int) or p < 0 or p >= partitions:
                problems.append(f"{instance} lists partition {p!r}, outside 0..{partitions - 1}")
            elif p in seen:
                problems.append(f"partition {p} listed by {seen[p]} and {instance}")
            else:
                seen[p] = instance
    missing = [p for p in range(partitions) if p not in seen]
    if missing:
        problems.append(f"{len(missing)} partitions listed by no instance (first: {missing[:8]})")
    return problems


def ownership_problems(accessories, partitions, table_owner, state_instance):
    """Every accessory's retained state is published by the owner cluster_partitions names for
    its partition. `accessories`: [address]; `table_owner`: {partition: owner}; `state_instance`:
    {address: instance of its latest retained state, or None}. Returns [(address, why)]."""
    problems = []
    for address in accessories:
        p = partition_of(address, partitions)
        owner = table_owner.get(p)
        got = state_instance.get(address)
        if owner is None:
            problems.append((address, f"partition {p} has no owner in cluster_partitions"))
        elif got != owner:
            problems.append((address, f"partition {p}: state published by {got}, owner is {owner}"))
    return problems


def lost_registrations(acked, stored):
    """Acknowledged registrations missing from the database. `acked`: {accessory_id: generation
    of its last acknowledged request}; `stored`: {accessory_id: generation in the registrations
    table, or None}. Requests for one accessory are sent one after another with increasing
    generations, and none after an unanswered one, so the stored generation may be newer than
    the last acknowledged (a later request applied, its answer lost) but never older.
    Returns [(accessory_id, acked generation, stored generation)]."""
    return [(a, g, stored.get(a)) for a, g in sorted(acked.items())
            if stored.get(a) is None or stored[a] < g]


def attribute_decisions(changes, decisions, window):
    """Placement decisions grouped by the telemetry change that caused them.
    `changes`: {accessory: [(sent_at, placement_kind)]} in time order, placement_kind 'worn' or
    'off', as the traffic generator sent them (the first message with the new placement);
    `decisions`: [(arrived_at, accessory, instance, reason)] with reason 'placement:<p>'.
    A decision belongs to the latest change of its accessory sent before it arrived, when its
    placement is that change's and it arrived within `window` seconds; otherwise it is
    unattributed. Returns ({(accessory, change index): [instances]}, unattributed count)."""
    import bisect
    times = {a: [c[0] for c in cs] for a, cs in changes.items()}
    groups = {}
    unattributed = 0
    for arrived, accessory, instance, reason in decisions:
        kind = "off" if reason == "placement:offHead" else "worn"
        ts = times.get(accessory, [])
        i = bisect.bisect_right(ts, arrived) - 1
        if i < 0 or changes[accessory][i][1] != kind or arrived - ts[i] > window:
            unattributed += 1
            continue
        groups.setdefault((accessory, i), []).append(instance)
    return groups, unattributed


def duplicate_decisions(groups):
    """Changes answered by more than one instance: [(key, instances)]."""
    return [(key, sorted(set(inst))) for key, inst in sorted(groups.items()) if len(set(inst)) > 1]


def epoch_regressions(publications):
    """Per accessory, publications (state and decisions) in arrival order must never carry an
    older epoch than one already seen: that would be a stale owner publishing after the new one.
    `publications`: [(arrived_at, accessory, instance, epoch)] in arrival order. Returns
    [(accessory, arrived_at, (instance, epoch), (newest instance, newest epoch))]."""
    newest = {}
    problems = []
    for arrived, accessory, instance, epoch in publications:
        if epoch is None:
            continue
        top = newest.get(accessory)
        if top is not None and epoch < top[1]:
            problems.append((accessory, arrived, (instance, epoch), top))
        elif top is None or epoch > top[1]:
            newest[accessory] = (instance, epoch)
    return problems


def moved(before, after):
    """Accessories whose owning instance differs between two {address: instance} maps."""
    return sorted(a for a in before if a in after and before[a] != after[a])
