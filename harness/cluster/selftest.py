"""cluster_test.py --selftest: what can be tried without cluster mode.

1. The checks' logic on synthetic data (hashes, rendezvous, partition lists, loss, duplicate
   decisions, epochs).
2. PostgreSQL as the harness drives it: initdb as the postgres user, start, the role and
   database, psql queries, the contract's advisory-lock mechanism (a session's lock is held
   until the session ends), the contract's tables read by the harness's queries, a fast stop and
   start, a kill -9 of the postmaster and start (crash recovery), with their times.
3. mosquitto, the traffic generator, the monitor and the registrar against ONE plain aabridge
   instance on SQLite (no cluster): registrations acknowledged and stored (generation encoding
   read back with sqlite3), placement flips decoded and answered by decisions, which the
   attribution groups by change.
"""
import os
import subprocess
import threading
import time

import checks


def run(args, root, ct):
    check, figure = ct.check, ct.figure
    print("== selftest: the checks on synthetic data", flush=True)
    pure(check)
    print("== selftest: PostgreSQL start, queries, advisory locks, fast restart, kill -9 restart", flush=True)
    postgres(ct, root)
    if ct.mqtt is None:
        check("selftest: python3-paho-mqtt importable (needed for the MQTT parts)", False,
              "apt-get install python3-paho-mqtt")
        return
    if not os.path.exists(args.binary):
        check(f"selftest: {args.binary} exists (swift build -c release --product aabridge)", False)
        return
    print("== selftest: mosquitto, traffic, monitor and registrar against one plain instance (SQLite)", flush=True)
    single(ct, args, root)


def pure(check):
    check("fnv1a64 test vectors ('' and 'a', 'foobar')",
          checks.fnv1a64(b"") == 0xCBF29CE484222325 and checks.fnv1a64(b"a") == 0xAF63DC4C8601EC8C
          and checks.fnv1a64(b"foobar") == 0x85944171F73967E8)
    check("address bytes: colon, plain and int forms agree",
          checks.address_bytes("A1:B2:C3:D4:E5:F6") == bytes.fromhex("a1b2c3d4e5f6")
          == checks.address_bytes("a1b2c3d4e5f6") == checks.address_bytes(0xA1B2C3D4E5F6))
    parts = 64
    counts = {}
    for n in range(1000):
        p = checks.partition_of(0xA0B0C1000000 | n, parts)
        counts[p] = counts.get(p, 0) + 1
    check("1,000 accessories spread over all 64 partitions", len(counts) == parts,
          f"{len(counts)} used, min {min(counts.values())}, max {max(counts.values())}")
    three = checks.rendezvous_map(parts, ["a", "b", "c"])
    two = checks.rendezvous_map(parts, ["a", "c"])
    moved_leave = [p for p in range(parts) if three[p] != two[p]]
    check("rendezvous: when b leaves only b's partitions move",
          all(three[p] == "b" for p in moved_leave) and len(moved_leave) == sum(1 for o in three.values() if o == "b"))
    moved_join = [p for p in range(parts) if two[p] != three[p]]
    check("rendezvous: when b joins only partitions that go to b move", all(three[p] == "b" for p in moved_join))
    problem = checks.balance_problem(parts, ["a", "b", "c"])
    check("rendezvous: each of a, b, c gets a fair share of 64 partitions", problem is None, problem or "")
    # The values Tests/BridgeTests/ClusterPartitioningTests pins for the bridge.
    check("rendezvous: the bridge's weights", checks.score("a", 0) == 10402776913116952670 and checks.score("b", 7) == 1548265106365999568)
    check("rendezvous: the same answer whatever the order of the live list",
          checks.rendezvous_map(parts, ["c", "a", "b"]) == three)
    check("partition lists: disjoint and covering is clean",
          not checks.partition_lists_problems({"a": [0, 1], "b": [2], "c": [3]}, 4))
    problems = checks.partition_lists_problems({"a": [0, 1], "b": [1], "c": [5]}, 4)
    check("partition lists: an overlap, an outsider and a gap are reported", len(problems) == 3, "; ".join(problems))
    table = {0: "a", 1: "b"}
    acc = [bytes.fromhex("000000000000"), bytes.fromhex("000000000001")]
    a0, a1 = 0, 1
    p0, p1 = checks.partition_of(a0, 2), checks.partition_of(a1, 2)
    good = {a0: table[p0], a1: table[p1]}
    bad = {a0: table[p0], a1: "c"}
    check("ownership: the owner's state passes, another instance's fails",
          not checks.ownership_problems([a0, a1], 2, table, good)
          and len(checks.ownership_problems([a0, a1], 2, table, bad)) == 1 and acc)
    lost = checks.lost_registrations({1: 5, 2: 7, 3: 9}, {1: 5, 2: 8, 3: 4})
    check("loss: stored older than acknowledged is a loss, newer is not", [x[0] for x in lost] == [3], str(lost))
    check("loss: a missing row is a loss", checks.lost_registrations({1: 5}, {}) == [(1, 5, None)])
    changes = {10: [(100.0, "worn"), (110.0, "off"), (120.0, "worn")]}
    decisions = [(100.2, 10, "a", "placement:inEar"), (101.0, 10, "a", "placement:inEar"),
                 (110.3, 10, "a", "placement:offHead"), (112.0, 10, "c", "placement:offHead"),
                 (120.1, 10, "c", "placement:inEar"), (99.0, 10, "a", "placement:inEar"),
                 (125.0, 10, "c", "placement:offHead")]
    groups, unattributed = checks.attribute_decisions(changes, decisions, 10.0)
    dups = checks.duplicate_decisions(groups)
    check("decisions: a change answered by two instances is a duplicate, by one (even twice) is not",
          [k for k, _ in dups] == [(10, 1)] and unattributed == 2, f"dups {dups}, unattributed {unattributed}")
    pubs = [(1, 10, "a", 3), (2, 10, "a", 3), (3, 10, "c", 4), (4, 10, "a", 3), (5, 11, "b", 1), (6, 10, "c", 4)]
    reg = checks.epoch_regressions(pubs)
    check("epochs: an older epoch after a newer one is reported once", len(reg) == 1 and reg[0][1] == 4, str(reg))
    check("moved: accessories whose instance changed",
          checks.moved({1: "a", 2: "b", 3: "c"}, {1: "a", 2: "c", 3: "c"}) == [2])


def postgres(ct, root):
    check, figure = ct.check, ct.figure
    pg = ct.Postgres(root)
    started = time.monotonic()
    try:
        pg.init()
        pg.start()
        pg.create()
    except Exception as error:
        check("postgres: initdb, start, role and database", False, repr(error))
        return
    check("postgres: initdb (as postgres), start on 127.0.0.1, role and database aabridge", True,
          f"{time.monotonic() - started:.1f} s, {pg.url}")
    try:
        listen = pg.psql("SHOW listen_addresses", database="postgres", user="postgres")
        check("postgres: listens on 127.0.0.1 only", listen == [["127.0.0.1"]], str(listen))
        check("postgres: synchronous_commit on", pg.psql("SHOW synchronous_commit") == [["on"]])
        # The contract's tables, filled with synthetic rows, read back by the harness's queries.
        pg.psql("CREATE TABLE cluster_partitions(partition INT PRIMARY KEY, owner TEXT, epoch BIGINT, since TIMESTAMPTZ);"
                "CREATE TABLE registrations(accessory_id BIGINT PRIMARY KEY, capabilities INT, placement INT, "
                "primary_source BIGINT, secondary_source BIGINT, invalidated BOOLEAN, updated_at TIMESTAMPTZ)")
        owners = checks.rendezvous_map(64, ["a", "b", "c"])
        pg.psql("INSERT INTO cluster_partitions VALUES " +
                ",".join(f"({p},'{o}',{p % 3 + 1},now())" for p, o in owners.items()))
        pg.psql(f"INSERT INTO registrations VALUES ({ct.accessory_address(0)},3,0,{ct.phone_address(0)},"
                f"{ct.generation_address(42)},false,now()), ({ct.accessory_address(1)},3,0,{ct.phone_address(1)},NULL,false,now())")

        class Fake:
            pass
        fake = Fake()
        fake.pg, fake.n = pg, 10
        table, epochs = ct.Cluster.table_owners(fake)
        check("postgres: cluster_partitions read back (owner, epoch)", table == owners and epochs[5] == 5 % 3 + 1)
        gens = ct.Cluster.stored_generations(fake)
        check("postgres: registrations read back, generation decoded from the secondary source",
              gens == {0: 42, 1: None}, str(gens))
        # The ownership mechanism: a session-level advisory lock is held while its session lives,
        # refused to others, and released by the server when the session ends. An idle session
        # (the backend waiting for the next command) ends at once when its client dies; a busy
        # one only when the server next reads or writes the socket (client_connection_check_interval
        # is off by default): measured here for both.
        for busy in (False, True):
            key = 8 if busy else 7
            holder = subprocess.Popen(["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(pg.port), "-U",
                                       "aabridge", "-d", "aabridge"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL)
            holder.stdin.write(f"SELECT pg_try_advisory_lock(1094795840, {key});\n".encode())
            if busy:
                holder.stdin.write(b"SELECT pg_sleep(8);\n")
            holder.stdin.flush()
            first = holder.stdout.readline().decode().strip()
            time.sleep(0.3)
            other = pg.psql(f"SELECT pg_try_advisory_lock(1094795840, {key})")
            holder.kill()
            holder.wait()
            t0 = time.monotonic()
            released = ct.wait_for(lambda: pg.psql(f"SELECT pg_try_advisory_lock(1094795840, {key})") == [["t"]], 15, 0.05)
            took = time.monotonic() - t0
            if busy:
                figure(f"selftest: advisory lock of a client killed during an 8 s query freed after {took:.2f} s "
                       f"(the server notices a dead client only when the query ends)")
            else:
                check("postgres: advisory lock (1094795840, 7): held by one session, refused to another, "
                      "freed within 1 s once the idle holder's client is killed",
                      first == "t" and other == [["f"]] and released and took < 1.0,
                      f"holder {first}, other {other}, free again after {took:.2f} s")
        # Fast stop and start.
        t0 = time.monotonic()
        pg.stop("fast")
        stopped = time.monotonic() - t0
        refused = not pg.ready()
        pg.start()
        figure(f"selftest: postgres fast stop {stopped:.2f} s, start {time.monotonic() - t0 - stopped:.2f} s")
        check("postgres: fast stop refuses connections, start serves the same data",
              refused and ct.Cluster.stored_generations(fake) == {0: 42, 1: None})
        # kill -9 of the postmaster with a client connected, and start (crash recovery).
        client = subprocess.Popen(["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "aabridge",
                                   "-d", "aabridge", "-c", "SELECT pg_sleep(30)"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        pg.psql(f"INSERT INTO registrations VALUES ({ct.accessory_address(2)},3,0,{ct.phone_address(2)},"
                f"{ct.generation_address(43)},false,now())")
        t0 = time.monotonic()
        pg.stop("kill")
        gone = time.monotonic() - t0
        pg.start()
        gens = ct.Cluster.stored_generations(fake)
        client_exit = client.wait(15)
        figure(f"selftest: postgres kill -9 -> backends gone {gone:.2f} s, restarted (crash recovery) "
               f"{time.monotonic() - t0 - gone:.2f} s later")
        check("postgres: kill -9 of the postmaster and start: the committed row survives, the client's session ended",
              gens == {0: 42, 1: None, 2: 43} and client_exit != 0, f"{gens}, client exit {client_exit}")
    except Exception as error:
        check("postgres: scenario ran to the end", False, repr(error))
    finally:
        pg.stop("fast")


def single(ct, args, root):
    """One plain instance (SQLite): the harness's MQTT side end to end, without cluster fields."""
    check, figure = ct.check, ct.figure
    work = os.path.join(root, "single")
    os.makedirs(work)
    broker = ct.Broker(work)
    broker.start()
    n = args.explicit_accessories or 40
    rate = args.rate if args.explicit_accessories else 100.0
    half_period = args.half_period if args.explicit_accessories else 2.0
    database = os.path.join(work, "db.sqlite3")
    instance = ct.Instance(args.binary, work, "single",
                           ct.instance_yaml("single", broker.port, None, n, 64, args.debounce_ms, cluster=False,
                                            storage_path=database))
    monitor = traffic = registrar = None
    try:
        monitor = ct.Monitor(broker.port)
        started = time.monotonic()
        instance.start()
        online = ct.wait_for(lambda: monitor.bridge_state and monitor.bridge_state[-1][1] == "online", 30)
        if not check("single: instance online (bridge/state)", online,
                     f"log: {' | '.join(instance.tail(3))}"):
            return
        ct.wait_for(lambda: len(monitor.latest) >= n, 10)
        check(f"single: the {n} migrated accessories' retained states seen", len(monitor.latest) == n,
              f"{len(monitor.latest)} seen, {time.monotonic() - started:.1f} s after the start")
        registrar = ct.Registrar(broker.port, monitor, [], 20)
        entries = registrar.register_all(range(n), parallel=8)
        ok = sum(1 for e in entries if e[3] == "ok")
        check(f"single: {n} registrations acknowledged", ok == n,
              "; ".join(f"{e[1]}: {e[3]} {e[6]}" for e in entries if e[3] != "ok")[:300])
        out = subprocess.run(["sqlite3", database, "SELECT accessory_id, secondary_source FROM registrations"],
                             capture_output=True, timeout=30).stdout.decode()
        rows = [line.split("|") for line in out.splitlines() if line]
        stored = ct.generations(rows, n)
        lost = checks.lost_registrations(dict(registrar.acked), stored)
        check("single: acknowledged generations read back from the database (loss check: 0)", not lost and len(stored) == n,
              f"lost {lost[:3]}, stored {len(stored)}")
        flipping = [i for i in range(n) if i % 4 != 0]
        traffic = ct.Traffic(broker.port, n, flipping, rate, half_period)
        registrar.targets = [i for i in range(n) if i % 4 == 0]
        traffic.start()
        registrar.start()
        time.sleep(max(12.0, 3 * half_period))
        traffic.stop()
        registrar.stop()
        time.sleep(1.0)
        changes = {ct.accessory_address(i): c for i, c in traffic.snapshot_changes().items()}
        with monitor.lock:
            decisions = [(t, a, inst, reason) for t, a, inst, epoch, reason, action in monitor.decisions
                         if isinstance(reason, str) and reason.startswith("placement:")]
            reasons = sorted({d[4] for d in monitor.decisions if d[4]})
        groups, unattributed = checks.attribute_decisions(changes, decisions, half_period)
        total = sum(len(c) for c in changes.values())
        figure(f"selftest: {traffic.sent} advertisements, {total} placement changes, {len(decisions)} placement "
               f"decisions, {len(groups)} changes answered, {unattributed} unattributed; reasons seen: {reasons}")
        check("single: placement flips in OpenMQTTGateway advertisements are decoded and answered by decisions",
              total > 0 and len(groups) >= 0.8 * total, f"{len(groups)} of {total}")
        lat = sorted(min(t for t, a, inst, r in decisions if a == key[0] and t >= changes[key[0]][key[1]][0]) -
                     changes[key[0]][key[1]][0] for key in groups)
        if lat:
            figure(f"selftest: change -> decision latency median {lat[len(lat) // 2] * 1000:.0f} ms, "
                   f"max {lat[-1] * 1000:.0f} ms (debounce {args.debounce_ms} ms; each accessory is heard every "
                   f"{n / rate:.1f} s)")
        dups = checks.duplicate_decisions(groups)
        check("single: the duplicate-decision check finds none with one instance", not dups, str(dups[:3]))
        worn_states = sum(1 for t, p in monitor.latest.values() if p and p.get("worn") is True)
        requests = registrar.log
        check("single: registrations during traffic acknowledged",
              requests and all(e[3] == "ok" for e in requests),
              f"{len(requests)} requests, {sum(1 for e in requests if e[3] == 'ok')} ok")
        figure(f"selftest: states worn at the end {worn_states}/{n}; fields instance/epoch present: "
               f"{sum(1 for t, p in monitor.latest.values() if p and 'instance' in p)}/{n} (none expected without cluster mode)")
    except Exception as error:
        check("single: scenario ran to the end", False, repr(error))
    finally:
        for component in (traffic, registrar):
            if component:
                try:
                    component.stop()
                except Exception:
                    pass
        instance.stop()
        if monitor:
            monitor.stop()
        broker.stop()
