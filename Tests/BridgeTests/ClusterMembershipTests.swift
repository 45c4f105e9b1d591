import AccessoryKit
import Configuration
import Foundation
import LocalProcess
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Bridge

/// ``ClusterMembership`` on a real PostgreSQL (``LocalPostgres``): advisory locks, rendezvous
/// balancing, hand-over, takeover when a session ends, notifications, and what it refuses.
@Suite("Cluster membership on PostgreSQL", .serialized)
struct ClusterMembershipTests {
    /// One membership, with the runtime's side played by the test: it records what it is
    /// told and hands partitions over at once when asked.
    final class Member: Sendable {
        /// What the membership said, and who to tell that a hand-over is done.
        final class Record: Sendable {
            let state = Mutex<(held: [Int: Int64], members: [String], changed: Set<BluetoothAddress>, emptied: Int)>(([:], [], [], 0))
            let logs = Mutex<[String]>([])
            let membership = Mutex<ClusterMembership?>(nil)

            func report(_ event: ClusterEvent) {
                switch event {
                case .ownership(let held, let members):
                    state.withLock {
                        if held.isEmpty && !$0.held.isEmpty { $0.emptied += 1 }
                        $0.held = held
                        $0.members = members
                    }
                case .releasing(let partitions):
                    state.withLock { for partition in partitions { $0.held[partition] = nil } }
                    membership.withLock { $0 }?.released(partitions)
                case .changed(let ids):
                    state.withLock { $0.changed.formUnion(ids) }
                case .loadAgain:
                    break
                }
            }
        }

        let name: String
        let membership: ClusterMembership
        private let record = Record()

        init(_ name: String, url: String, partitions: Int = 64) throws {
            self.name = name
            var configuration = BridgeConfiguration(hostname: name)
            configuration.storage.backend = .postgresql
            configuration.storage.url = url
            configuration.cluster = ClusterConfiguration(hostname: name, enabled: true, partitions: partitions)
            let record = self.record
            let logger = BridgeLogger(minimum: .error, forward: { _, message in record.logs.withLock { $0.append(message) } })
            membership = ClusterMembership(configuration: configuration, logger: logger) { record.report($0) }
            record.membership.withLock { $0 = membership }
        }

        var held: [Int: Int64] { record.state.withLock { $0.held } }
        var members: [String] { record.state.withLock { $0.members } }
        var changed: Set<BluetoothAddress> { record.state.withLock { $0.changed } }
        /// How often it was told it holds nothing after holding something.
        var emptied: Int { record.state.withLock { $0.emptied } }
        var errors: [String] { record.logs.withLock { $0 } }
    }

    /// A PostgreSQL with the store's schema.
    static func withDatabase(_ body: (LocalPostgres) async throws -> Void) async throws {
        let postgres = try LocalPostgres()
        defer { postgres.stop() }
        PostgresStoreHandle.migrate(postgres.url)
        try await body(postgres)
    }

    /// Instances a and b on a fresh database, started and balanced; both are stopped after
    /// `body` (stopping one again is harmless).
    static func withPair(_ body: (LocalPostgres, Member, Member) async throws -> Void) async throws {
        try await withDatabase { postgres in
            let a = try Member("a", url: postgres.url)
            let b = try Member("b", url: postgres.url)
            a.membership.start()
            b.membership.start()
            #expect(await eventually(timeout: .seconds(20)) { balanced([a, b]) }, "a \(a.held.count), b \(b.held.count)")
            try await body(postgres, a, b)
            await a.membership.stop()
            await b.membership.stop()
        }
    }

    /// Whether `members` hold every partition exactly once, each the one rendezvous gives it.
    static func balanced(_ members: [Member], partitions: Int = 64) -> Bool {
        let names = members.map(\.name)
        let partitioning = Partitioning(count: partitions)
        for member in members where Set(member.held.keys) != partitioning.partitions(of: member.name, among: names) { return false }
        return true
    }

    @Test("three instances hold disjoint shares covering every partition; one joining takes only its share; one leaving hands its share on")
    func balanceJoinAndLeave() async throws {
        try await Self.withPair { postgres, a, b in
            #expect(a.members == ["a", "b"])
            let before = (a: a.held, b: b.held)
            #expect(before.a.values.allSatisfy { $0 >= 1 })

            let c = try Member("c", url: postgres.url)
            c.membership.start()
            #expect(
                await eventually(timeout: .seconds(20)) { Self.balanced([a, b, c]) },
                "a \(a.held.count), b \(b.held.count), c \(c.held.count)")
            // Only c's share moved: what a and b hold now, they held before, at the same epoch.
            for (partition, epoch) in a.held { #expect(before.a[partition] == epoch) }
            for (partition, epoch) in b.held { #expect(before.b[partition] == epoch) }
            let share = Set(c.held.keys)
            #expect((10...34).contains(share.count), "about a third: \(share.count)")

            await c.membership.stop()
            #expect(await eventually(timeout: .seconds(20)) { Self.balanced([a, b]) })
            for partition in share {
                let epoch = a.held[partition] ?? b.held[partition]
                #expect(epoch != nil && epoch! > c.held[partition]!, "partition \(partition) taken at a higher epoch")
            }
        }
    }

    @Test("an instance whose session ends is told at once it holds nothing; the other takes its share, and it comes back")
    func sessionLossAndTakeover() async throws {
        try await Self.withPair { postgres, a, b in
            let admin = try PostgresConnection(url: postgres.url)
            defer { admin.close() }
            try admin.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'aabridge-cluster-b'")
            #expect(await eventually(timeout: .seconds(10)) { b.emptied >= 1 }, "b told it holds nothing")
            // b reconnects within a second and settles; meanwhile a may take some of its share.
            #expect(await eventually(timeout: .seconds(20)) { Self.balanced([a, b]) && b.emptied >= 1 })
            await a.membership.stop()
            #expect(await eventually(timeout: .seconds(20)) { b.held.count == 64 }, "b took everything after a left: \(b.held.count)")
        }
    }

    @Test(
        "commits of other instances arrive as changes, one's own do not; a second instance of one name and a different partition count hold nothing"
    )
    func notificationsAndRefusals() async throws {
        try await Self.withPair { postgres, a, b in
            let store = try PostgresStore(url: postgres.url, origin: "a")
            defer { store.close() }
            let id = try #require(BluetoothAddress("A1:B2:C3:D4:E5:F6"))
            try store.apply([.migrationComplete, .upsertAccessory(PostgresStoreHandle.accessory(id))], sources: [:])
            #expect(await eventually(timeout: .seconds(10)) { b.changed.contains(id) })
            try await Task.sleep(for: .milliseconds(500))
            #expect(a.changed.isEmpty, "its own commit is not a change from elsewhere")

            let twin = try Member("a", url: postgres.url)
            let other = try Member("d", url: postgres.url, partitions: 32)
            twin.membership.start()
            other.membership.start()
            #expect(await eventually(timeout: .seconds(10)) { !twin.errors.isEmpty && !other.errors.isEmpty })
            #expect(twin.held.isEmpty && other.held.isEmpty)
            #expect(twin.errors.first?.contains("already instance 'a'") == true, "\(twin.errors)")
            #expect(other.errors.first?.contains("cluster.partitions is 32 here but 64") == true, "\(other.errors)")
            #expect(Self.balanced([a, b]), "the others are undisturbed")
            for member in [twin, other] { await member.membership.stop() }
        }
    }
}

/// The store's schema and a stored accessory, for the membership's tests.
enum PostgresStoreHandle {
    static func migrate(_ url: String) {
        (try? PostgresStore(url: url))?.close()
    }

    static func accessory(_ id: BluetoothAddress) -> Accessory {
        Accessory(
            id: id, displayName: "Test", product: "AirPods Pro", descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x004C),
            state: .authorized)
    }
}

/// One real cluster instance (the runtime, its membership on a real PostgreSQL, a real broker,
/// its HTTP server): it takes every partition, says so on its topic and in `/metrics`, and
/// its answers carry its name.
@Suite("A cluster instance on PostgreSQL, end to end")
struct ClusterInstanceTests {
    @Test("alone, it holds every partition, publishes its accessories with its name and epoch, and reports the cluster in /metrics")
    func aloneHoldsEverything() async throws {
        let postgres = try LocalPostgres()
        defer { postgres.stop() }
        let port = try FreePort.find()
        let harness = try BridgeHarness(mqttExtra: "http:\n  listen: 127.0.0.1:\(port)\n")
        defer { harness.removeDirectory() }
        var configuration = harness.configuration
        configuration.storage.backend = .postgresql
        configuration.storage.url = postgres.url
        configuration.cluster = ClusterConfiguration(hostname: "solo", enabled: true, partitions: 16)
        let runner = RuntimeRunner(configuration: configuration, databasePath: harness.databasePath)
        let url = postgres.url
        runner.openStore = { try PostgresStore(url: url, origin: "solo") }
        let observer = try await Observer(broker: harness.broker)
        try await runner.start(observer: observer, clock: BridgeClock.now)

        let instance = await observer.waitFor("aabridge/bridge/instances/solo") { $0["partitions"]?.arrayValue?.count == 16 }
        #expect(instance?["state"] == "online")
        #expect(instance?["accessories"] == 3)
        let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["instance"] == "solo" }
        #expect((state?["epoch"]?.intValue ?? 0) >= 1)
        let renamed = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Clustered""#)
        #expect(renamed["status"] == "ok")
        #expect(renamed["instance"] == "solo")
        let list = await observer.waitFor("aabridge/bridge/accessories") { ($0.arrayValue?.count ?? 0) == 3 }
        #expect(list?.arrayValue?.allSatisfy { $0["instance"] == "solo" } == true, "the list mirrors the published states")

        let metrics = try await HTTPTestClient.fetch(port: port, "GET", "/metrics")
        let (types, samples) = try MetricsEndpointTests.parse(metrics.text)
        #expect(types["aabridge_cluster_partitions_held"] == "gauge")
        #expect(MetricsEndpointTests.value(samples, "aabridge_cluster_partitions_held") == 16)
        #expect(MetricsEndpointTests.value(samples, "aabridge_cluster_members") == 1)
        #expect(MetricsEndpointTests.value(samples, "aabridge_cluster_accessories_owned") == 3)
        try await MetricsEndpointTests.promtool(metrics.text)

        #expect(await runner.stop() == 0)
        // The last instance leaving: offline on both its topic and the bridge's.
        await observer.waitFor("aabridge/bridge/instances/solo") { $0["state"] == "offline" }
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        await observer.disconnect()
    }
}
