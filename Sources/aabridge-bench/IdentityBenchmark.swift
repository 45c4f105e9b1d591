import AccessoryKit
import Foundation
import JSON
import LocalProcess
import MQTT
import Telemetry

/// Identity resolution: what one sighting costs the resolver with 10, 100 and 1,000 IRKs, and
/// what a flood of fresh random resolvable-looking addresses does to the real daemon's memory.
///
/// Per sighting, three cases: `cold`, a fresh resolvable private address no key resolves (the
/// worst case: every key is tried, then the miss is cached); `hit`, a fresh address generated
/// from the last key (every key tried too, the last one matches); `cached`, an address already
/// answered. Wall clock (ns, best and median of rounds) in-process; with `--callgrind` each case
/// also runs once more under `valgrind --tool=callgrind`, collecting only inside the measured
/// loop, for exact instructions per sighting.
///
/// The flood: the release `aabridge` against a real mosquitto on loopback, 100 (then 0) IRKs in
/// its `accessories:` entries, 1,000,000 OpenMQTTGateway advertisements from distinct random
/// addresses whose top bits say resolvable private, published by 4 clients at QoS 1 as fast as
/// they go, in awaited bursts of 50,000 (then, with 100 IRKs, in one burst). VmRSS before,
/// sampled during, VmHWM, and VmRSS after; the drain time is until the health request each
/// publisher sends after its last burst is answered (the bridge handles one ordered stream).
/// `--no-flood` skips it; AABRIDGE_BENCH_FLOOD and AABRIDGE_BENCH_FLOOD_IRKS change its size.
enum IdentityBenchmark {
    static let keyCounts = [10, 100, 1_000]
    static let rounds = 5
    static let floodMessages = Int(ProcessInfo.processInfo.environment["AABRIDGE_BENCH_FLOOD"] ?? "") ?? 1_000_000
    static let floodPublishers = 4
    static let floodBurst = 50_000
    static let floodIRKs: [Int] = (ProcessInfo.processInfo.environment["AABRIDGE_BENCH_FLOOD_IRKS"] ?? "100,0")
        .split(separator: ",").compactMap { Int($0) }

    enum Case: String, CaseIterable {
        case cold, hit, cached
    }

    static func run() async throws {
        let arguments = CommandLine.arguments
        micro()
        if arguments.contains("--callgrind") { try callgrind() }
        if !arguments.contains("--no-flood") {
            let executable = try E2E.aabridgeExecutable()
            for irks in floodIRKs { try await flood(executable: executable, irks: irks, burst: floodBurst) }
            // The same flood as fast as the publishers go, with what the broker sheds.
            try await flood(executable: executable, irks: floodIRKs.first ?? 100, burst: floodMessages)
        }
    }

    /// `identity --callgrind-child <keys> <cold|hit|cached> <count>`: one measured loop, for
    /// the parent's valgrind run (started from main.swift, synchronously).
    static func callgrindChild(_ arguments: [String]) throws {
        guard let index = arguments.firstIndex(of: "--callgrind-child"), arguments.count == index + 4,
            let keys = Int(arguments[index + 1]), let kind = Case(rawValue: arguments[index + 2]), let count = Int(arguments[index + 3])
        else {
            throw E2E.Failure("usage: identity --callgrind-child <keys> <cold|hit|cached> <count>")
        }
        var setup = Setup(keys: keys, kind: kind, count: count)
        let resolved = measuredLoop(&setup.resolver, setup.addresses)
        print("identity.callgrind_child keys=\(keys) case=\(kind.rawValue) count=\(count) resolved=\(resolved)")
    }

    // MARK: per sighting

    /// Deterministic keys, the addresses of one case, and a resolver whose cache already has
    /// its full capacity allocated (as it has in a running bridge after the first 10,000
    /// addresses), so growing the dictionary is not counted against the first sightings.
    struct Setup {
        var resolver: AddressResolver<Int>
        var addresses: [BluetoothAddress]
        let keys: [(identity: Int, key: IdentityResolvingKey)]

        init(keys count: Int, kind: Case, count addressCount: Int, seed: UInt64 = 7) {
            var rng = BenchRandom(seed: seed)
            keys = (0..<count).map { n in
                let bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                return (identity: n, key: IdentityResolvingKey(bytes: bytes)!)
            }
            func randomRPA() -> BluetoothAddress {
                BluetoothAddress(rawValue: 0x4000_0000_0000 | (rng.next() & 0x3FFF_FFFF_FFFF))
            }
            resolver = AddressResolver(keys: [keys[0]])
            for _ in 0..<resolver.cacheCapacity { _ = resolver.resolve(randomRPA()) }
            resolver.keys = keys // forgets the answers, keeps the allocated capacity
            let last = keys[count - 1].key
            switch kind {
            case .cold:
                addresses = (0..<addressCount).map { _ in randomRPA() }
            case .hit:
                addresses = (0..<addressCount).map { _ in
                    let prand = 0x40_0000 | UInt32(truncatingIfNeeded: rng.next() & 0x3F_FFFF)
                    return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(last.hash(prand: prand)!))
                }
            case .cached:
                // 1,000 addresses answered once (half hits, half misses), then looked up in turn.
                let known = (0..<1_000).map { n -> BluetoothAddress in
                    guard n % 2 == 0 else { return randomRPA() }
                    let prand = 0x40_0000 | UInt32(truncatingIfNeeded: rng.next() & 0x3F_FFFF)
                    return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(last.hash(prand: prand)!))
                }
                for address in known { _ = resolver.resolve(address) }
                addresses = (0..<addressCount).map { known[$0 % known.count] }
            }
        }
    }

    /// The measured loop, kept out of line so callgrind can collect inside it only
    /// (`--toggle-collect='*measuredLoop*'`). Returns how many addresses resolved.
    @inline(never)
    static func measuredLoop(_ resolver: inout AddressResolver<Int>, _ addresses: [BluetoothAddress]) -> Int {
        var resolved = 0
        for address in addresses where resolver.resolve(address) != nil { resolved += 1 }
        return resolved
    }

    /// Sightings per round: about two million key trials for the uncached cases, at most the
    /// cache capacity (no reset inside a round).
    static func sightings(keys: Int, kind: Case) -> Int {
        kind == .cached ? 1_000_000 : min(10_000, max(200, 2_000_000 / keys))
    }

    static func micro() {
        print("identity: resolution cost per sighting, one core, wall clock (best / median of \(rounds) rounds)")
        for keys in keyCounts {
            for kind in Case.allCases {
                let count = sightings(keys: keys, kind: kind)
                var results: [Double] = []
                var resolved = 0
                for round in 0..<rounds {
                    var setup = Setup(keys: keys, kind: kind, count: count, seed: UInt64(round + 1))
                    let start = E2E.nanoseconds()
                    resolved = measuredLoop(&setup.resolver, setup.addresses)
                    results.append(Double(E2E.nanoseconds() - start) / Double(count))
                }
                results.sort()
                let expected = kind == .cold ? 0 : (kind == .hit ? count : count / 2)
                let check = resolved == expected ? "" : " (resolved \(resolved), expected \(expected))"
                print("identity.ns_per_sighting_\(kind.rawValue)_\(keys)_irks \(E2E.format(results[0], 1)) ns")
                print(
                    "  \(keys) IRKs, \(kind.rawValue): best \(E2E.format(results[0], 1)) ns, median \(E2E.format(results[rounds / 2], 1)) ns per sighting "
                        + "(\(count) sightings per round)\(check)")
            }
        }
    }

    /// Each case once under callgrind, collecting inside ``measuredLoop(_:_:)`` only: the
    /// instruction count divided by the sightings is exact and repeatable.
    static func callgrind() throws {
        let me = E2E.benchmarkExecutable().path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-callgrind-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("identity: instructions per sighting (valgrind --tool=callgrind --toggle-collect='*measuredLoop*')")
        for keys in keyCounts {
            for kind in Case.allCases {
                let count = kind == .cached ? 10_000 : (keys >= 1_000 ? 200 : 1_000)
                let out = "\(directory)/callgrind.\(keys).\(kind.rawValue)"
                let child = try ChildProcess(
                    path: "/usr/bin/valgrind",
                    arguments: [
                        "--tool=callgrind", "--toggle-collect=*measuredLoop*", "--callgrind-out-file=\(out)",
                        me, "identity", "--callgrind-child", "\(keys)", kind.rawValue, "\(count)",
                    ], output: "\(directory)/log")
                guard child.wait() == 0, let total = IngestCallgrind.totalInstructions(out) else {
                    throw E2E.Failure("valgrind failed for \(keys) keys, \(kind.rawValue); see \(directory)/log")
                }
                print("identity.instructions_per_sighting_\(kind.rawValue)_\(keys)_irks \(E2E.format(total / Double(count), 0)) Ir")
                print(
                    "  \(keys) IRKs, \(kind.rawValue): \(E2E.format(total / Double(count), 0)) instructions per sighting (\(count) sightings)"
                )
            }
        }
    }

    // MARK: flood

    /// `/proc/<pid>/status` fields in KiB (-1 when absent).
    static func memory(_ pid: pid_t) -> (rss: Int, peak: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func kib(_ key: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return -1 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        return (kib("VmRSS"), kib("VmHWM"))
    }

    /// Address `i` of the flood: a bijection of `i` on the low 46 bits (an odd multiplier,
    /// then an xor-shift), so every address is distinct and random-looking, with the top two
    /// bits `0b01` (resolvable private).
    static func floodAddress(_ i: Int) -> UInt64 {
        let mask: UInt64 = 0x3FFF_FFFF_FFFF
        var v = (UInt64(i) &* 0x2545_F491_4F6C_DD1D) & mask
        v ^= v >> 23
        return 0x4000_0000_0000 | v
    }

    static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The OpenMQTTGateway topic and payload for address `raw` (built without Foundation
    /// formatting: the publishers must outrun the bridge).
    static func floodMessage(publisher: Int, raw: UInt64) -> (String, [UInt8]) {
        var mac: [UInt8] = []
        var id: [UInt8] = []
        mac.reserveCapacity(12)
        id.reserveCapacity(17)
        for n in 0..<6 {
            let byte = UInt8(truncatingIfNeeded: raw >> (8 * UInt64(5 - n)))
            let high = hexDigits[Int(byte >> 4)]
            let low = hexDigits[Int(byte & 0xF)]
            mac.append(high)
            mac.append(low)
            if n > 0 { id.append(UInt8(ascii: ":")) }
            id.append(high)
            id.append(low)
        }
        let topic = "home/gw\(publisher)/BTtoMQTT/" + String(decoding: mac, as: UTF8.self)
        var payload = Array(#"{"id":""#.utf8)
        payload.append(contentsOf: id)
        payload.append(contentsOf: #"","rssi":-71,"manufacturerdata":"4c000719010e2000f58f01000000000000000000000000000000000000"}"#.utf8)
        return (topic, payload)
    }

    static func flood(executable: String, irks: Int, burst: Int) async throws {
        let broker = try E2E.Broker(noDelay: false)
        defer { broker.stop() }
        let workspace = try E2E.Workspace(accessories: 0, tag: "identity")
        var rng = BenchRandom(seed: 99)
        var yaml = workspace.yaml(port: broker.port)
        if irks > 0 {
            yaml += "accessories:\n"
            for n in 0..<irks {
                let key = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                yaml +=
                    "  - {id: \"\(E2E.accessoryID(n))\", name: \"Bench \(n)\", product: \(E2E.productName), irk: \"\(Hex.encode(key))\"}\n"
            }
        }
        let configuration = workspace.directory + "/aabridge.yaml"
        try yaml.write(toFile: configuration, atomically: true, encoding: .utf8)

        let probe = try await E2E.client(broker, "bench-identity")
        let responses = E2E.Recorder(probe)
        try await probe.subscribe("aabridge/bridge/state", qos: .atLeastOnce)
        try await probe.subscribe("aabridge/bridge/response/health", qos: .atLeastOnce)
        let child = try ChildProcess(
            path: executable, arguments: ["run", "--config", configuration], output: workspace.directory + "/aabridge.log")
        defer { child.stop() }
        guard
            await responses.wait(
                timeout: 120,
                until: { $0.contains { $0.topic == "aabridge/bridge/state" && E2E.object($0.payload)?["state"]?.stringValue == "online" } })
        else {
            let log = (try? String(contentsOfFile: workspace.directory + "/aabridge.log", encoding: .utf8)) ?? ""
            throw E2E.Failure("aabridge did not come online; log:\n\(log)")
        }

        let responseTopic = "aabridge/bridge/response/health"
        var transaction = 0
        func health() async throws -> JSONValue {
            transaction += 1
            return try await responses.health(through: probe, transaction: transaction, timeout: 600)
        }

        // Settled: a few seconds after online, and the health answer before the flood.
        try await Task.sleep(for: .seconds(3))
        let before = try await health()
        let memoryBefore = memory(child.pid)

        var clients: [MQTTClient] = []
        for p in 0..<floodPublishers { clients.append(try await E2E.client(broker, "bench-flood\(p)")) }
        let publishers = clients

        // VmRSS sampled every 100 ms during the flood (VmHWM is the kernel's own peak).
        let sampling = Task.detached { () -> Int in
            var highest = 0
            while !Task.isCancelled {
                highest = max(highest, memory(child.pid).rss)
                try? await Task.sleep(for: .milliseconds(100))
            }
            return highest
        }

        // In bursts of `burst` messages, each followed by one health request per publisher
        // and awaited: a single burst of 1 M outruns the bridge and mosquitto sheds what its
        // per-client queue (max_queued_messages 100000) cannot hold, so fewer distinct
        // addresses reach the resolver; bursts of 50,000 deliver all of them.
        let bursts = (floodMessages + burst - 1) / burst
        let share = burst / floodPublishers
        var publishSeconds = 0.0
        var drained = true
        let start = E2E.nanoseconds()
        var end = start
        for b in 0..<bursts {
            let tag = 1_000_000 * (b + 1)
            let burstStart = E2E.nanoseconds()
            publishSeconds += await withTaskGroup(of: Double.self) { group in
                for p in 0..<floodPublishers {
                    let client = publishers[p]
                    group.addTask {
                        await E2E.onThread {
                            _ = E2E.paced(count: share, rate: nil) { i in
                                let (topic, payload) = floodMessage(publisher: p, raw: floodAddress(b * burst + p * share + i))
                                _ = client.enqueue(topic: topic, payload: payload, qos: .atLeastOnce)
                            }
                            _ = client.enqueue(
                                topic: "aabridge/bridge/request/health", payload: Array(#"{"transaction":\#(tag + p)}"#.utf8),
                                qos: .atLeastOnce)
                            return Double(E2E.nanoseconds() - burstStart) / 1e9
                        }
                    }
                }
                var longest = 0.0
                for await seconds in group { longest = max(longest, seconds) }
                return longest
            }
            var exited = false
            let answered = await responses.wait(timeout: 300) { arrivals in
                // A bridge that died answers nothing: stop waiting for it.
                if !child.isRunning {
                    exited = true
                    return true
                }
                var answered = 0
                var last: UInt64 = 0
                for arrival in arrivals.reversed() where arrival.topic == responseTopic {
                    if let tx = E2E.object(arrival.payload)?["transaction"]?.intValue, tx >= tag, tx < tag + floodPublishers {
                        answered += 1
                        last = max(last, arrival.at)
                    }
                    if answered == floodPublishers { break }
                }
                if answered == floodPublishers { end = last }
                return answered == floodPublishers
            }
            if exited {
                throw E2E.Failure("aabridge exited during burst \(b + 1) of \(bursts), status \(child.wait())")
            }
            if !answered {
                drained = false
                end = E2E.nanoseconds()
                break
            }
        }
        sampling.cancel()
        let sampledPeak = await sampling.value
        try await Task.sleep(for: .milliseconds(150))
        let after = try await health()
        let memoryDrained = memory(child.pid)
        // Final: 10 s after the drain, when the runtime may have handed freed memory back.
        try await Task.sleep(for: .seconds(10))
        let memoryFinal = memory(child.pid)

        let received = (after["messages_in"]?.intValue ?? 0) - (before["messages_in"]?.intValue ?? 0) - bursts * floodPublishers - 1
        let rejected = (after["telemetry_rejected"]?.intValue ?? 0) - (before["telemetry_rejected"]?.intValue ?? 0)
        let sent = share * floodPublishers * bursts
        let mode = burst >= floodMessages ? "one burst" : "bursts of \(burst)"
        let label = "\(irks)_irks" + (burst >= floodMessages ? "_one_burst" : "")
        let drainSeconds = Double(end - start) / 1e9
        print(
            "identity flood (\(irks) IRKs): \(sent) advertisements from distinct random resolvable-looking addresses, "
                + "\(floodPublishers) OpenMQTTGateway publishers at QoS 1, \(mode)")
        print("identity.flood_rss_before_kib_\(label) \(memoryBefore.rss) KiB")
        print("identity.flood_rss_sampled_peak_kib_\(label) \(sampledPeak) KiB")
        print("identity.flood_vmhwm_kib_\(label) \(memoryDrained.peak) KiB")
        print("identity.flood_rss_drained_kib_\(label) \(memoryDrained.rss) KiB")
        print("identity.flood_rss_final_kib_\(label) \(memoryFinal.rss) KiB")
        print("identity.flood_publish_s_\(label) \(E2E.format(publishSeconds, 2)) s")
        print("identity.flood_drain_s_\(label) \(E2E.format(drainSeconds, 2)) s\(drained ? "" : " (INCOMPLETE)")")
        print(
            "  received by the bridge \(received), dropped \(max(0, sent - received) + rejected) "
                + "(broker \(max(0, sent - received)), backlog/rejected \(rejected)); VmHWM before the flood \(memoryBefore.peak) KiB; "
                + "\(E2E.format(Double(sent) / drainSeconds, 0)) msg/s through the bridge")
        await probe.disconnect()
        for client in publishers { await client.disconnect() }
    }
}
