import AccessoryKit
import Configuration
import Foundation
import JSON
import LocalProcess
import MQTT
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Bridge

/// What a cluster instance handles and publishes, by what it owns (docs/scaling.md): the
/// runtime on an in-memory connection and a real SQLite store, with the membership's events
/// posted by the test. The membership itself, on a real PostgreSQL, is ClusterMembershipTests;
/// several real instances, scripts/cluster-test.
@Suite("Cluster: ownership decides what an instance does")
struct ClusterFlowTests {
    static let partitioning = Partitioning(count: 64)

    /// Every partition but `except`, at `epoch`.
    static func held(except excluded: Set<Int> = [], epoch: Int64 = 7) -> [Int: Int64] {
        Dictionary(uniqueKeysWithValues: (0..<64).filter { !excluded.contains($0) }.map { ($0, epoch) })
    }

    static func partition(_ address: String) -> Int {
        partitioning.partition(of: BluetoothAddress(address)!)
    }

    /// An ordering barrier for an instance that holds nothing: a request over HTTP, which it
    /// refuses with 421 once the loop has handled everything that came before.
    static func barrier(port: Int) async throws {
        let refused = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/health", body: Array("{}".utf8))
        #expect(refused.status == 421)
    }

    /// A cluster instance "a" whose membership is the test: `post` sends it a ``ClusterEvent``.
    static func withInstance(
        failingLoads: FailingLoads? = nil, httpPort: Int? = nil,
        _ body: (InMemoryConnection, _ post: @escaping @Sendable (ClusterEvent) -> Void, _ database: String) async throws -> Void
    ) async throws {
        try await InMemoryRuntime.withConfiguration { loaded, database in
            var configuration = loaded
            // The loader allows a cluster only on PostgreSQL; what is tested here does not
            // depend on the backend.
            configuration.cluster = ClusterConfiguration(hostname: "a", enabled: true, partitions: 64)
            if let httpPort { configuration.http.listen = HTTPConfiguration.Listen("127.0.0.1:\(httpPort)") }
            let connection = InMemoryConnection()
            let store = try AccessoryStore(path: database)
            failingLoads?.store.withLock { $0 = store }
            let runtime = try BridgeRuntime(configuration: configuration, store: failingLoads ?? store, connection: connection)
            try #require(runtime.component(ClusterComponent.self)).postsItsOwnEvents()
            let mailbox = try #require(runtime.mailbox(of: ClusterComponent.self))
            try await InMemoryRuntime.run(runtime, on: connection) {
                try await body(connection, { mailbox.post($0) }, database)
            }
        }
    }

    @Test("nothing about an accessory is published before its partition is held; then its state carries the instance and epoch")
    func statesWaitForOwnership() async throws {
        let port = try FreePort.find()
        try await Self.withInstance(httpPort: port) { connection, post, _ in
            let state = "aabridge/accessory/\(Fixture.airPodsTopic)"
            try await Self.barrier(port: port)
            #expect(connection.json(on: state).isEmpty, "no state before any partition is held")
            #expect(connection.json(on: "aabridge/bridge/info").isEmpty, "nor the bridge's topics")
            post(.ownership(held: Self.held(epoch: 3), members: ["a"]))
            let published = await connection.waitFor(state) { $0["instance"] == "a" }
            #expect(published?["epoch"] == 3)
            #expect(published?["id"] == .string(Fixture.airPods))
            await connection.waitFor("aabridge/bridge/instances/a") { $0["state"] == "online" && $0["partitions"]?.arrayValue?.count == 64 }
            await connection.waitFor("aabridge/bridge/info")
        }
    }

    @Test("telemetry and requests for an accessory another instance holds are left to it; its own are answered with instance and epoch")
    func othersAccessoriesAreLeftAlone() async throws {
        let speakerPartition = Self.partition(Fixture.speaker)
        try #require(speakerPartition != Self.partition(Fixture.headphones) && speakerPartition != 0)
        try await Self.withInstance { connection, post, _ in
            post(.ownership(held: Self.held(except: [speakerPartition], epoch: 5), members: ["a", "b"]))
            let headphones = "aabridge/accessory/\(Fixture.headphonesTopic)"
            let speaker = "aabridge/accessory/\(Fixture.speakerTopic)"
            await connection.waitFor(headphones) { $0["epoch"] == 5 }
            connection.deliver("aabridge/telemetry/livingroom/\(Fixture.speakerTopic)", #"{"rssi":-70}"#)
            connection.deliver("aabridge/telemetry/livingroom/\(Fixture.headphonesTopic)", #"{"rssi":-71}"#)
            await connection.waitFor(headphones) { $0["rssi"] == -71 }
            #expect(connection.json(on: speaker).isEmpty, "the speaker's state is its owner's to publish")

            // In order: had the speaker's rename been answered, it would be before this one.
            connection.deliver("aabridge/bridge/request/accessory/rename", #"{"id":"\#(Fixture.speaker)","name":"Den","transaction":"s"}"#)
            let renamed = await connection.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Desk""#)
            #expect(renamed?["status"] == "ok")
            #expect(renamed?["instance"] == "a")
            #expect(renamed?["epoch"] == 5)
            #expect(!connection.json(on: "aabridge/bridge/response/accessory/rename").contains { $0["transaction"] == "s" })
            let health = await connection.request("health")
            #expect(health?["status"] == "ok", "partition 0 is held: the bridge's requests are answered here")
        }
    }

    @Test("a decision carries the instance and the epoch of its accessory's partition; its route is published by that owner")
    func decisionsAreStamped() async throws {
        try await Self.withInstance { connection, post, _ in
            post(.ownership(held: Self.held(epoch: 11), members: ["a"]))
            await connection.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["epoch"] == 11 }
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
            connection.deliver(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            connection.deliver(telemetry, #"{"placement":"inEar"}"#)
            let decision = await connection.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/decision") { $0["action"] == "route" }
            #expect(decision?["instance"] == "a")
            #expect(decision?["epoch"] == 11)
            let route = await connection.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            #expect(route?["instance"] == "a")
            #expect(route?["epoch"] == 11)
        }
    }

    @Test("a release does not put back to fallback a source another instance has since routed to its own accessory")
    func releaseLeavesAnotherInstancesRoute() async throws {
        let speakerPartition = Self.partition(Fixture.speaker)
        try await Self.withInstance { connection, post, _ in
            post(.ownership(held: Self.held(except: [speakerPartition], epoch: 2), members: ["a", "b"]))
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
            let route = "aabridge/source/\(Fixture.phoneTopic)/route"
            let decisions = "aabridge/accessory/\(Fixture.airPodsTopic)/decision"
            connection.deliver(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            connection.deliver(telemetry, #"{"placement":"inEar"}"#)
            await connection.waitFor(route) { $0["target"] == .string(Fixture.airPods) }
            // Instance b routed the phone to its speaker since (the broker delivers b's route).
            connection.deliver(
                route, #"{"source":"\#(Fixture.phone)","target":"\#(Fixture.speaker)","instance":"b","epoch":3}"#, retain: true)
            #expect(await connection.request("health")?["status"] == "ok", "an ordering barrier: b's route was taken")
            let routes = connection.json(on: route).count
            connection.deliver(telemetry, #"{"placement":"offHead"}"#)
            await connection.waitFor(decisions) { $0["action"] == "release" }
            #expect(await connection.request("health")?["status"] == "ok", "an ordering barrier: the release is done")
            #expect(connection.json(on: route).count == routes, "b's route stays: \(connection.json(on: route))")

            // With the broker showing the phone on this instance's accessory, a release publishes fallback.
            connection.deliver(telemetry, #"{"placement":"inEar"}"#)
            await connection.waitFor(route) { $0["target"] == .string(Fixture.airPods) && $0["instance"] == "a" }
            connection.deliver(telemetry, #"{"placement":"offHead"}"#)
            await connection.waitFor(route) { $0["target"] == "fallback" }
        }
    }

    @Test("over HTTP, a request another instance answers gets 421 and why; its own are answered with instance and epoch")
    func misdirectedOverHTTP() async throws {
        let speakerPartition = Self.partition(Fixture.speaker)
        let port = try FreePort.find()
        try await Self.withInstance(httpPort: port) { connection, post, _ in
            post(.ownership(held: Self.held(except: [speakerPartition, 0], epoch: 6), members: ["a", "b"]))
            await connection.waitFor("aabridge/bridge/instances/a") { $0["partitions"]?.arrayValue?.count == 62 }
            let elsewhere = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/rename", body: Array(#"{"id":"\#(Fixture.speaker)","name":"Den"}"#.utf8))
            #expect(elsewhere.status == 421)
            let refusal = try JSONParser.parse(elsewhere.text)
            #expect(refusal["status"] == "error")
            #expect(refusal["error"]?["message"]?.stringValue?.contains("partition \(speakerPartition)") == true, "\(refusal)")
            let bridgeWide = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/health", body: Array("{}".utf8))
            #expect(bridgeWide.status == 421, "partition 0 is held elsewhere")
            let own = try await HTTPTestClient.fetch(
                port: port, "POST", "/api/request/accessory/rename", body: Array(#"{"id":"\#(Fixture.headphones)","name":"Desk"}"#.utf8))
            #expect(own.status == 200)
            let answer = try JSONParser.parse(own.text)
            #expect(answer["instance"] == "a")
            #expect(answer["epoch"] == 6)
            #expect(connection.json(on: "aabridge/bridge/response/accessory/rename").isEmpty, "HTTP requests are answered over HTTP only")
        }
    }

    @Test("the bridge's requests and topics belong to the holder of partition 0")
    func bridgeWorkFollowsPartitionZero() async throws {
        try #require(Self.partition(Fixture.headphones) != 0)
        try await Self.withInstance { connection, post, _ in
            post(.ownership(held: Self.held(except: [0]), members: ["a", "b"]))
            await connection.waitFor("aabridge/bridge/instances/a") { $0["partitions"]?.arrayValue?.count == 63 }
            connection.deliver("aabridge/bridge/request/health", #"{"transaction":"early"}"#)
            connection.deliver("aabridge/bridge/request/picker/show", #"{"transaction":"early"}"#)
            // An ordering barrier: a request this instance answers, sent after those.
            let current = await connection.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
            #expect(current?["status"] != nil)
            #expect(connection.json(on: "aabridge/bridge/response/health").isEmpty)
            #expect(connection.json(on: "aabridge/bridge/response/picker/show").isEmpty)
            #expect(connection.json(on: "aabridge/bridge/info").isEmpty)
            post(.ownership(held: Self.held(epoch: 9), members: ["a"]))
            let health = await connection.request("health")
            #expect(health?["epoch"] == 9)
            await connection.waitFor("aabridge/bridge/info")
        }
    }

    @Test("partitions whose state cannot be loaded are not worked on until it can be")
    func unloadedPartitionsAreNotOwned() async throws {
        let storage = FailingLoads()
        let port = try FreePort.find()
        try await Self.withInstance(failingLoads: storage, httpPort: port) { connection, post, _ in
            storage.failing.store(true, ordering: .relaxed)
            post(.ownership(held: Self.held(epoch: 4), members: ["a"]))
            await connection.waitFor("aabridge/bridge/instances/a") { $0["partitions"] == [] }
            try await Self.barrier(port: port)
            #expect(connection.json(on: "aabridge/accessory/\(Fixture.airPodsTopic)").isEmpty, "nothing published from unloaded state")
            let health = "aabridge/bridge/response/health"
            connection.deliver("aabridge/bridge/request/health", #"{"transaction":"unloaded"}"#)
            await connection.forwarded()
            try await Self.barrier(port: port)
            #expect(connection.json(on: health).isEmpty, "nor answered")
            storage.failing.store(false, ordering: .relaxed)
            await connection.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["epoch"] == 4 }
            await connection.waitFor("aabridge/bridge/instances/a") { $0["partitions"]?.arrayValue?.count == 64 }
        }
    }

    @Test("keys another instance stored resolve the accessory's rotating addresses here")
    func othersKeysResolveHere() async throws {
        try await Self.withInstance { connection, post, database in
            post(.ownership(held: Self.held(), members: ["a", "b"]))
            let headphones = "aabridge/accessory/\(Fixture.headphonesTopic)"
            await connection.waitFor(headphones) { $0["instance"] == "a" }
            let other = try AccessoryStore(path: database)
            let id = try #require(BluetoothAddress(Fixture.headphones))
            let irk = try AccessoryKey.parse(IdentityResolutionFlowTests.irk).get()
            try other.apply([.saveKeys(id, AccessoryKeys(irk: irk))])
            other.close()
            post(.changed([id]))
            await connection.waitFor(headphones) { $0["keys"]?["irk"] == true }
            let address = try IdentityResolutionFlowTests.resolvableAddress(prand: 0x708194)
            connection.deliver(
                "home/gw1/BTtoMQTT/\(address.replacingOccurrences(of: ":", with: ""))",
                #"{"id":"\#(address)","rssi":-50,"name":"Acme Studio"}"#)
            // A rename publishes the state with what the sighting left.
            #expect(await connection.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Resolved""#)?["status"] == "ok")
            await connection.waitFor(headphones) { $0["name"] == "Resolved" && $0["gateway"] == "gw1" && $0["identity"] == "irk" }
        }
    }

    @Test("a peer's will saying offline on bridge/state is answered with online by a live instance")
    func peersWillIsCorrected() async throws {
        try await Self.withInstance { connection, post, _ in
            #expect(connection.subscriptions.contains("aabridge/bridge/state"))
            let onlines = connection.json(on: "aabridge/bridge/state").count { $0 == ["state": "online"] }
            connection.deliver("aabridge/bridge/state", #"{"state":"offline"}"#, retain: true)
            let found = await eventually(timeout: .seconds(10)) {
                connection.json(on: "aabridge/bridge/state").count { $0 == ["state": "online"] } > onlines
            }
            #expect(found)
        }
    }

    @Test("handed-over partitions are no longer worked on")
    func handOverStopsWork() async throws {
        let headphonesPartition = Self.partition(Fixture.headphones)
        try await Self.withInstance { connection, post, _ in
            post(.ownership(held: Self.held(), members: ["a"]))
            let headphones = "aabridge/accessory/\(Fixture.headphonesTopic)"
            await connection.waitFor(headphones) { $0["instance"] == "a" }
            post(.releasing([headphonesPartition]))
            await connection.waitFor("aabridge/bridge/instances/a") { $0["partitions"]?.arrayValue?.count == 63 }
            let before = connection.json(on: headphones).count
            connection.deliver("aabridge/telemetry/livingroom/\(Fixture.headphonesTopic)", #"{"rssi":-60}"#)
            connection.deliver("aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"rssi":-61}"#)
            await connection.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["rssi"] == -61 }
            #expect(connection.json(on: headphones).count == before)
        }
    }

    @Test("a change another instance stored is taken from storage and published by the owner")
    func othersChangesAreReloaded() async throws {
        try await Self.withInstance { connection, post, database in
            post(.ownership(held: Self.held(), members: ["a", "b"]))
            let headphones = "aabridge/accessory/\(Fixture.headphonesTopic)"
            await connection.waitFor(headphones) { $0["instance"] == "a" }
            // Instance b (the holder of partition 0, say) renamed it in the shared database.
            let other = try AccessoryStore(path: database)
            var accessory = try #require(try other.load().accessories.first { $0.id.description == Fixture.headphones })
            accessory.displayName = "Renamed elsewhere"
            try other.apply([.upsertAccessory(accessory)])
            other.close()
            post(.changed([accessory.id]))
            await connection.waitFor(headphones) { $0["name"] == "Renamed elsewhere" }
        }
    }
}

/// What a cluster instance stores: only its own accessories' telemetry writes.
@Suite("Cluster: an instance stores only what it owns")
struct ClusterStorageTests {
    /// A core over the end-to-end configuration's accessories, on a fresh SQLite store,
    /// activated (the migration stored), with `ownership`.
    static func withCore(
        ownership: Ownership, _ body: (RuntimeCore, AccessoryStore) async throws -> Void
    ) async throws {
        try await InMemoryRuntime.withConfiguration { configuration, database in
            let store = try AccessoryStore(path: database)
            let core = RuntimeCore(
                engine: BridgeEngine(configuration: configuration.engine, restored: try store.load()),
                storage: StorageWorker(store: store), diagnostics: Diagnostics(logger: BridgeLogger(minimum: .error)), ownership: ownership)
            _ = await core.activate(at: Timestamp(milliseconds: 1_000))
            try await body(core, store)
            await core.storage.close()
        }
    }

    static func placementReport(_ placement: AccessoryControlDevice.Placement) throws -> EngineInput {
        .report(
            AccessoryReport(
                accessory: try #require(BluetoothAddress(Fixture.airPods)), gateway: "livingroom", changes: [.placement(placement)]))
    }

    static func storedPlacement(_ store: AccessoryStore) throws -> AccessoryControlDevice.Placement? {
        try store.load().registrations[try #require(BluetoothAddress(Fixture.airPods))]?.configuration.devicePlacement
    }

    @Test("telemetry's registration writes are stored for an owned accessory, and not for one another instance holds")
    func onlyOwnedWritesAreStored() async throws {
        let airPods = ClusterFlowTests.partition(Fixture.airPods)
        let owning = Ownership(instance: "a", partitions: 64, held: ClusterFlowTests.held())
        try await Self.withCore(ownership: owning) { core, store in
            _ = await core.handleTelemetry(try Self.placementReport(.inEar), at: Timestamp(milliseconds: 2_000), context: "test")
            #expect(core.hasDeferredWrites)
            await core.flushDeferredWrites(at: Timestamp(milliseconds: 2_100))
            #expect(try Self.storedPlacement(store) == .inEar)
        }
        let other = Ownership(instance: "a", partitions: 64, held: ClusterFlowTests.held(except: [airPods]))
        try await Self.withCore(ownership: other) { core, store in
            let outputs = await core.handleTelemetry(try Self.placementReport(.inEar), at: Timestamp(milliseconds: 2_000), context: "test")
            #expect(outputs.contains { if case .registrationChanged = $0 { true } else { false } }, "the engine changed in memory")
            #expect(!core.hasDeferredWrites, "but nothing waits to be stored")
            await core.flushDeferredWrites(at: Timestamp(milliseconds: 2_100))
            #expect(try Self.storedPlacement(store) != .inEar)
        }
    }

    @Test("writes waiting for a partition that was lost are dropped, not stored after the new owner took over")
    func lostPartitionsWritesAreDropped() async throws {
        let airPods = ClusterFlowTests.partition(Fixture.airPods)
        let owning = Ownership(instance: "a", partitions: 64, held: ClusterFlowTests.held())
        try await Self.withCore(ownership: owning) { core, store in
            _ = await core.handleTelemetry(try Self.placementReport(.inEar), at: Timestamp(milliseconds: 2_000), context: "test")
            #expect(core.hasDeferredWrites)
            core.dropDeferredWrites { ClusterFlowTests.partitioning.partition(of: $0) == airPods }
            #expect(!core.hasDeferredWrites)
            await core.flushDeferredWrites(at: Timestamp(milliseconds: 2_100))
            #expect(try Self.storedPlacement(store) != .inEar)
        }
    }
}

/// A real SQLite store whose `load()` can be made to fail (a database that cannot be read
/// for a while), for what the runtime does then.
final class FailingLoads: AccessoryStorage {
    let store = Mutex<AccessoryStore?>(nil)
    let failing = Atomic<Bool>(false)

    private var wrapped: AccessoryStore { store.withLock { $0! } }
    var location: String { wrapped.location }
    var committedTransactions: Int { wrapped.committedTransactions }
    var isReadOnly: Bool { wrapped.isReadOnly }

    func apply(_ writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]]) throws(StorageError) {
        try wrapped.apply(writes, sources: sources)
    }

    func load() throws(StorageError) -> RestoredState {
        if failing.load(ordering: .relaxed) { throw StorageError(.unavailable, message: "the test made loads fail") }
        return try wrapped.load()
    }

    func load(accessories ids: [BluetoothAddress]) throws(StorageError) -> RestoredState {
        if failing.load(ordering: .relaxed) { throw StorageError(.unavailable, message: "the test made loads fail") }
        return try wrapped.load(accessories: ids)
    }

    func loadSources() throws(StorageError) -> [BluetoothAddress: [BluetoothAddress]] { try wrapped.loadSources() }
    func close() { wrapped.close() }
}
