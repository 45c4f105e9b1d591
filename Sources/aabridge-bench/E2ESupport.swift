import AccessoryKit
import Bridge
import Configuration
import Foundation
import JSON
import LocalProcess
import MQTT
import Storage
import Synchronization

/// Shared pieces of the end-to-end benchmarks (e2e-throughput, e2e-latency, memory): a
/// prepared database and configuration, the bridge in-process, MQTT probes that time what
/// arrives, and a paced publisher. Everything talks to 127.0.0.1 only.
enum E2E {
    /// A mosquitto on a free loopback port, configured like TestSupport's MosquittoBroker
    /// (anonymous, no persistence, max_queued_messages 100000), optionally with
    /// `set_tcp_nodelay true`: mosquitto's default leaves Nagle on for its client sockets.
    final class Broker: Sendable {
        let port: Int
        let directory: String
        private let process: ChildProcess

        init(noDelay: Bool) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-broker-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            port = try FreePort.find()
            var lines = [
                "persistence false", "log_dest file \(directory)/mosquitto.log", "log_type error", "log_type warning",
                "user root", "per_listener_settings false", "max_queued_messages 100000", "allow_anonymous true",
            ]
            if noDelay { lines.append("set_tcp_nodelay true") }
            lines.append("listener \(port) 127.0.0.1")
            try (lines.joined(separator: "\n") + "\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
            process = try ChildProcess(path: "/usr/sbin/mosquitto", arguments: ["-c", directory + "/mosquitto.conf"])
            guard FreePort.waitUntilListening(port: port, timeout: 10) else {
                process.stop()
                throw Failure("mosquitto did not listen on 127.0.0.1:\(port)")
            }
        }

        func stop() { if process.isRunning { process.stop() } }

        deinit {
            stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// The address of registered accessory `n` (n < 2^20).
    static func accessoryID(_ n: Int) -> AccessoryKit.BluetoothAddress {
        AccessoryKit.BluetoothAddress(rawValue: 0xA0B0_C000_0000 | UInt64(n))
    }

    static let productName = "Bench Buds"
    static let descriptor = DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x004C)

    /// A scratch directory with a database holding `accessories` authorized accessories, each
    /// registered with audioSwitching + placement and one of 64 sources as primary.
    /// With `postgresURL`, the accessories are stored in that (empty) PostgreSQL database
    /// instead, and the configuration says `backend: postgresql`.
    final class Workspace: Sendable {
        let directory: String
        let databasePath: String
        let accessories: Int
        let postgresURL: String?

        init(accessories: Int, tag: String, postgresURL: String? = nil) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-bench-\(tag)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            databasePath = directory + "/aabridge.sqlite3"
            self.accessories = accessories
            self.postgresURL = postgresURL
            let store: any AccessoryStorage = try postgresURL.map { try PostgresStore(url: $0) } ?? AccessoryStore(path: databasePath)
            defer { store.close() }
            var writes: [StorageWrite] = [.migrationComplete]
            writes.reserveCapacity(2 * accessories + 1)
            for n in 0..<accessories {
                let id = E2E.accessoryID(n)
                writes.append(
                    .upsertAccessory(
                        Accessory(
                            id: id, displayName: "Bench \(n)", product: E2E.productName,
                            descriptor: E2E.descriptor, state: .authorized)))
                writes.append(
                    .upsertRegistration(
                        id,
                        Registration(
                            configuration: .init(
                                devicePlacement: .offHead, deviceCapabilities: [.audioSwitching, .placement],
                                primaryAudioSourceDeviceIdentifier: AccessoryKit.BluetoothAddress(
                                    rawValue: 0x1122_3300_0000 | UInt64(n % 64))))))
            }
            // In chunks, so 100,000 accessories do not build one giant statement list.
            var start = 0
            while start < writes.count {
                let end = min(writes.count, start + 20_000)
                try store.apply(Array(writes[start..<end]), sources: [:])
                start = end
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// The configuration text for a broker on `port`.
        /// `relay`: with a `ha_relay` entry (`aabridge_relay/...`) after the others.
        func yaml(port: Int, clientID: String = "aabridge-bench", debounceMilliseconds: Int = 500, relay: Bool = false) -> String {
            """
            mqtt:
              server: mqtt://127.0.0.1:\(port)
              base_topic: aabridge
              client_id: \(clientID)
              keepalive: 60
              version: 5
            homeassistant:
              enabled: false
            storage:
            \(postgresURL.map { "  backend: postgresql\n  url: \($0)" } ?? "  path: \(databasePath)")
            health:
              interval_s: 3600
            log:
              level: warning
            setup:
              supports: [bluetooth]
              bluetooth:
                company_identifiers: [0x004C]
            products:
              - name: \(E2E.productName)
                hardware: inEarBud
                capabilities: [audioSwitching, placement]
                placement_decoder: none
                descriptor:
                  bluetooth_company_identifier: 0x004C
            gateways:
              - name: omg
                format: openmqttgateway
              - name: native
                format: native\(relay ? "\n  - name: relay\n    format: ha_relay" : "")
            switching:
              placement_debounce_ms: \(debounceMilliseconds)
              availability_timeout_s: 3600
              immediate_rssi: -40

            """
        }

        func writeConfiguration(port: Int, debounceMilliseconds: Int = 500) throws -> String {
            let path = directory + "/aabridge.yaml"
            try yaml(port: port, debounceMilliseconds: debounceMilliseconds).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    /// The bridge running in this process, as `aabridge run` runs it.
    final class InProcessBridge: @unchecked Sendable {
        // @unchecked: `runtime` is only touched by its own run task, except `stop()`, which
        // only yields to an AsyncStream continuation (thread-safe).
        private let runtime: BridgeRuntime
        private var task: Task<Int32, Never>?

        init(workspace: Workspace, port: Int, debounceMilliseconds: Int = 500) throws {
            let yaml = workspace.yaml(port: port, debounceMilliseconds: debounceMilliseconds)
            let configuration: BridgeConfiguration
            switch ConfigurationLoader.load(yaml: yaml) {
            case .success(let loaded): configuration = loaded
            case .failure(let errors): throw Failure(errors.description)
            }
            let store = try AccessoryStore(path: workspace.databasePath)
            runtime = try BridgeRuntime(configuration: configuration, store: store)
        }

        func start() {
            let runtime = self.runtime
            let box = UncheckedBox(runtime)
            task = Task.detached { await box.value.run(signals: nil) }
        }

        func stop() async {
            runtime.stop()
            _ = await task?.value
        }
    }

    struct UncheckedBox<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// A connected client on the loopback broker.
    static func client(_ broker: Broker, _ name: String, bufferLimit: Int? = nil) async throws -> MQTTClient {
        var configuration = MQTTConfiguration(host: "127.0.0.1", port: broker.port, clientID: "\(name)-\(UUID().uuidString.prefix(8))")
        configuration.messageBufferLimit = bufferLimit
        let client = try MQTTClient(configuration: configuration)
        try await client.connect()
        return client
    }

    /// Keeps every message that arrives on a client, with its arrival time (ns, monotonic).
    final class Recorder: Sendable {
        struct Arrival: Sendable {
            var topic: String
            var payload: [UInt8]
            var at: UInt64
        }

        private final class Storage: Sendable {
            let arrivals = Mutex<[Arrival]>([])
        }

        private let storage = Storage()
        private let task: Task<Void, Never>

        init(_ client: MQTTClient) {
            let stream = client.messages
            let storage = self.storage
            task = Task.detached {
                for await message in stream {
                    let now = E2E.nanoseconds()
                    storage.arrivals.withLock { $0.append(Arrival(topic: message.topic, payload: message.payload, at: now)) }
                }
            }
        }

        deinit { task.cancel() }

        var count: Int { storage.arrivals.withLock { $0.count } }
        func snapshot() -> [Arrival] { storage.arrivals.withLock { $0 } }
        func arrival(at index: Int) -> Arrival? { storage.arrivals.withLock { index < $0.count ? $0[index] : nil } }

        /// Sends the bridge's `health` request with `transaction` through `probe` (whose
        /// messages this recorder records) and returns the answer's `data`, which comes after
        /// everything published before the request.
        func health(through probe: MQTTClient, transaction: Int, timeout: Double) async throws -> JSONValue {
            let responseTopic = "aabridge/bridge/response/health"
            let before = count
            try await probe.publishAcknowledged(
                topic: "aabridge/bridge/request/health", string: #"{"transaction":\#(transaction)}"#, qos: .atLeastOnce)
            var found: JSONValue?
            _ = await wait(timeout: timeout) { arrivals in
                for arrival in arrivals[min(before, arrivals.count)...] where arrival.topic == responseTopic {
                    if let object = E2E.object(arrival.payload), object["transaction"]?.intValue == transaction {
                        found = object["data"]
                        return true
                    }
                }
                return false
            }
            guard let found else { throw E2E.Failure("no health response for transaction \(transaction)") }
            return found
        }

        /// Waits until `condition` holds on what arrived (true) or `timeout` seconds pass (false),
        /// without holding a thread of the cooperative pool (the in-process bridge needs them).
        func wait(timeout: Double, pollMicroseconds: Int = 1_000, until condition: ([Arrival]) -> Bool) async -> Bool {
            let deadline = E2E.nanoseconds() + UInt64(timeout * 1e9)
            while E2E.nanoseconds() < deadline {
                if storage.arrivals.withLock({ condition($0) }) { return true }
                try? await Task.sleep(for: .microseconds(pollMicroseconds))
            }
            return storage.arrivals.withLock { condition($0) }
        }

        /// The same, blocking: only for code running on its own thread (``E2E/onThread(_:)``).
        func waitBlocking(timeout: Double, pollMicroseconds: UInt32 = 50, until condition: ([Arrival]) -> Bool) -> Bool {
            let deadline = E2E.nanoseconds() + UInt64(timeout * 1e9)
            while E2E.nanoseconds() < deadline {
                if storage.arrivals.withLock({ condition($0) }) { return true }
                usleep(pollMicroseconds)
            }
            return storage.arrivals.withLock { condition($0) }
        }
    }

    /// Counts what arrives on a client and does nothing else (the plain subscriber).
    final class Counter: Sendable {
        private final class Storage: Sendable {
            let received = Atomic<Int>(0)
            let last = Atomic<UInt64>(0)
        }

        private let storage = Storage()
        private let task: Task<Void, Never>

        init(_ client: MQTTClient) {
            let stream = client.messages
            let storage = self.storage
            task = Task.detached {
                for await _ in stream {
                    storage.received.add(1, ordering: .relaxed)
                    storage.last.store(E2E.nanoseconds(), ordering: .relaxed)
                }
            }
        }

        deinit { task.cancel() }

        var count: Int { storage.received.load(ordering: .relaxed) }
        var lastArrival: UInt64 { storage.last.load(ordering: .relaxed) }
    }

    /// CPU time (user + system) of this process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Monotonic nanoseconds.
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Runs `body` on its own thread (publishers must not wait behind the cooperative pool,
    /// which the in-process bridge and the probes share) and returns when it has finished.
    static func onThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                body()
                continuation.resume()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Runs `body` on its own thread and returns its result.
    static func onThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        let box = ResultBox<Result>()
        await onThread { box.value.withLock { $0 = body() } }
        return box.value.withLock { $0! }
    }

    final class ResultBox<Value: Sendable>: Sendable {
        let value = Mutex<Value?>(nil)
    }

    /// Posts `count` messages from `make` at `rate` per second (nil: as fast as possible),
    /// pacing in 1 ms slices. Returns the seconds it took.
    static func paced(count: Int, rate: Double?, _ post: (Int) -> Void) -> Double {
        let start = nanoseconds()
        guard let rate else {
            for i in 0..<count { post(i) }
            return Double(nanoseconds() - start) / 1e9
        }
        var sent = 0
        while sent < count {
            let due = min(count, Int(Double(nanoseconds() - start) / 1e9 * rate) + 1)
            while sent < due {
                post(sent)
                sent += 1
            }
            if sent < count { usleep(500) }
        }
        return Double(nanoseconds() - start) / 1e9
    }

    /// The JSON object of a payload (bench-side only, never timed).
    static func object(_ payload: [UInt8]) -> JSONValue? {
        try? JSONParser.parse(payload)
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
    }

    static func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// This benchmark's own executable (the callgrind measurements run it again under valgrind).
    static func benchmarkExecutable() -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0], relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
    }

    /// The release `aabridge` next to this benchmark's executable.
    static func aabridgeExecutable() throws -> String {
        let path = benchmarkExecutable().deletingLastPathComponent().appendingPathComponent("aabridge").standardizedFileURL.path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure("\(path) not found: build it first (swift build -c release --product aabridge)")
        }
        return path
    }
}
