import AccessoryKit
import Foundation
import LocalProcess
import Storage

/// Storage figures: acknowledged registrations per second at the bridge's durability
/// (one `BEGIN IMMEDIATE ... COMMIT` per request, WAL with `synchronous=FULL`, so one fsync
/// each) and the startup load of 10,000 accessories with registrations; `storage-postgres`
/// the same on a local PostgreSQL (``LocalPostgres`` with `fsync` on, `synchronous_commit = on`).
enum StorageBenchmark {
    static func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-storage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/aabridge.sqlite3"
        try measure(prefix: "storage", durability: "WAL, synchronous=FULL") { try AccessoryStore(path: path) }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("storage: database \(size / 1024) KiB")
    }

    static func runPostgres() async throws {
        let server = try LocalPostgres(.init(fsync: true))
        defer { server.stop() }
        try measure(prefix: "storage_postgres", durability: "PostgreSQL on 127.0.0.1, synchronous_commit=on, fsync on") {
            try PostgresStore(url: server.url)
        }
    }

    /// Commits per second and the startup load through the stores `open` returns (each call a new one).
    static func measure(prefix: String, durability: String, open: () throws -> any AccessoryStorage) throws {
        let count = 10_000
        let clock = ContinuousClock()

        let store = try open()
        let accessories = (0..<count).map { n in
            Accessory(
                id: BluetoothAddress(rawValue: 0x00A0_0000_0000 + UInt64(n)), displayName: "Accessory \(n)", product: "Acme Buds",
                descriptor: DiscoveryDescriptor(
                    bluetoothCompanyIdentifier: 0x004C, bluetoothServiceUUID: BluetoothUUID("FE2C"),
                    bluetoothNameSubstring: "Acme", supportedOptions: [.bluetoothPairingLE]),
                state: .authorized, bluetoothTransportBridgingIdentifier: [1, 2, 3, 4, 5, 6])
        }
        func registration(_ n: Int, _ round: Int) -> Registration {
            let placements = AccessoryControlDevice.Placement.allCases
            return Registration(
                configuration: .init(
                    devicePlacement: placements[(n + round) % placements.count], deviceCapabilities: [.audioSwitching, .placement],
                    primaryAudioSourceDeviceIdentifier: BluetoothAddress(rawValue: 0x00B0_0000_0000 + UInt64(n % 64)),
                    secondaryAudioSourceDeviceIdentifier: n % 2 == 0 ? nil : BluetoothAddress(rawValue: 0x00B0_0000_1000 + UInt64(n % 64))))
        }
        // Populate in one transaction (not what is measured).
        try store.apply(
            accessories.enumerated().flatMap { n, accessory in
                [StorageWrite.upsertAccessory(accessory), .upsertRegistration(accessory.id, registration(n, 0))]
            })

        // (a) One durable commit per acknowledged registration, for about two seconds.
        var commits = 0
        let start = clock.now
        let budget = Duration.seconds(2)
        while clock.now - start < budget || commits < 20 {
            let n = commits % count
            try store.apply([.upsertRegistration(accessories[n].id, registration(n, commits / count + 1))])
            commits += 1
        }
        let elapsed = clock.now - start
        let perSecond = Double(commits) / seconds(elapsed)
        store.close()

        // (b) Open + load at startup, best and median of 5 (the first run warms the page cache,
        // as a restart after a clean shutdown would find it).
        var loads: [Duration] = []
        var opens: [Duration] = []
        var loaded = 0
        for _ in 0..<5 {
            let openStart = clock.now
            let reopened = try open()
            let loadStart = clock.now
            let state = try reopened.load()
            let end = clock.now
            opens.append(end - openStart)
            loads.append(end - loadStart)
            loaded = state.accessories.count + state.registrations.count
            reopened.close()
        }
        guard loaded == 2 * count else { throw BenchmarkFailure(message: "loaded \(loaded) rows, expected \(2 * count)") }
        loads.sort()
        opens.sort()
        let loadMedian = milliseconds(loads[2])
        let openMedian = milliseconds(opens[2])
        print("\(prefix).registrations_per_s \(format(perSecond)) commits/s")
        print("\(prefix).load_10000_ms \(format(loadMedian)) ms")
        print("\(prefix).open_and_load_10000_ms \(format(openMedian)) ms")
        print(
            """
            \(prefix): \(commits) durable registration commits in \(format(seconds(elapsed))) s \
            (\(format(1000 / perSecond)) ms each: \(durability), one transaction per request); \
            load of \(count) accessories + \(count) registrations: median \(format(loadMedian)) ms, \
            best \(format(milliseconds(loads[0]))) ms (open + load \(format(openMedian)) ms)
            """)
    }

    struct BenchmarkFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { "storage benchmark: \(message)" }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1000 }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
