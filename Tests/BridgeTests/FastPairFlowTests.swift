import AccessoryKit
import Configuration
import Foundation
import JSON
import MQTT
import Telemetry
import TestSupport
import Testing

@testable import Bridge

/// docs/telemetry.md, "Google Fast Pair", over a real broker and a real database: a migrated
/// Fast Pair accessory (`placement_decoder: none`, `capabilities: [audioSwitching]`) gets its
/// battery from OpenMQTTGateway advertisements of service 0xFE2C, never a placement; service
/// data in an unknown layout is counted in `fast_pair_ignored` and is not a rejection.
@Suite("Google Fast Pair over MQTT")
struct FastPairFlowTests {
    static let buds = "D1:B2:C3:D4:E5:F6"
    static let budsTopic = "D1B2C3D4E5F6"
    static let state = "aabridge/accessory/\(budsTopic)"

    /// The harness's configuration plus a Fast Pair product and one migrated accessory of it.
    static func yaml(server: String, database: String) -> String {
        let product = """
            products:
              - name: Pixel Buds Pro
                hardware: inEarBud
                capabilities: [audioSwitching]
                auto_register: true
                placement_decoder: none
                descriptor:
                  bluetooth_service_uuid: "FE2C"
                  # In pairing mode the service data is the 24-bit model ID alone.
                  bluetooth_service_data_blob: "2d7a23"
                  bluetooth_service_data_mask: "ffffff"

            """
        let accessory = """
            accessories:
              - id: "\(buds)"
                name: Carol's Pixel Buds
                product: Pixel Buds Pro

            """
        return BridgeHarness.yaml(server: server, database: database)
            .replacingOccurrences(of: "products:\n", with: product)
            .replacingOccurrences(of: "accessories:\n", with: accessory)
    }

    /// An OpenMQTTGateway sighting of `address` with Fast Pair service data (hex).
    static func sighting(_ observer: Observer, _ address: String = buds, serviceData: String) async throws {
        let topicID = address.replacingOccurrences(of: ":", with: "")
        try await observer.publish(
            "home/gw1/BTtoMQTT/\(topicID)",
            #"{"id":"\#(address)","rssi":-60,"servicedatauuid":"fe2c","servicedata":"\#(serviceData)"}"#)
    }

    /// `bridge/health` once its `fast_pair_ignored` reaches `count` (requests overtake waiting
    /// telemetry, so one answer may come before the sightings were handled).
    static func health(_ observer: Observer, fastPairIgnored count: Int) async throws -> JSONValue {
        var health = try await observer.request("health")
        for _ in 0..<100 where health["data"]?["fast_pair_ignored"]?.intValue != count {
            try await Task.sleep(for: .milliseconds(50))
            health = try await observer.request("health")
        }
        return health
    }

    /// An unknown layout is counted in `fast_pair_ignored`, not in `telemetry_rejected`.
    @Test("a Fast Pair accessory's battery comes from 0xFE2C, placement untouched; unknown layouts are counted")
    func batteryAndUnknownLayouts() async throws {
        let broker = try MosquittoBroker()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-fastpair-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let configuration = try ConfigurationLoader.load(
            yaml: Self.yaml(server: broker.url, database: database), environment: [:], hostname: "testhost"
        ).get()
        let observer = try await Observer(broker: broker)
        let runner = RuntimeRunner(configuration: configuration, databasePath: database)
        try await runner.start(observer: observer, clock: BridgeClock.now)

        let before = try #require(await observer.waitFor(Self.state) { $0["registration"] == "active" })
        #expect(before["capabilities"] == ["audioSwitching"])
        #expect(before["battery"] == .null)

        // Account data built from the specification: version 0x00; account key filter, 4 bytes,
        // show UI (0b0100_0000); salt, 2 bytes (0b0010_0001); battery, 3 values, show UI
        // (0b0011_0011): left 85 % (0x55), right 100 % charging (0xE4), case unknown (0x7F).
        try await Self.sighting(observer, serviceData: "00" + "400a0b0c0d" + "21c35a" + "3355e47f")
        let charged = try #require(await observer.waitFor(Self.state) { $0["battery"] != .null })
        #expect(charged["battery"] == ["left": 85, "right": 100])
        #expect(charged["available"] == true)
        #expect(charged["placement"] == before["placement"], "Fast Pair never sets a placement")
        #expect(charged["worn"] == before["worn"])

        // Hide UI (0b0011_0100), case now known: left 80 %, right 99 %, case 42 % charging (0xAA).
        try await Self.sighting(observer, serviceData: "00" + "420a0b0c0d" + "21c35a" + "345063aa")
        let updated = try #require(await observer.waitFor(Self.state) { $0["battery"]?["case"] == 42 })
        #expect(updated["battery"] == ["left": 80, "right": 99, "case": 42])
        #expect(updated["placement"] == before["placement"])

        // Unknown layouts: a battery level of 101 (0x65), and the shipped example product's
        // 00aabbcc from the Acme headphones (a known accessory too). Both sightings still count.
        try await Self.sighting(observer, serviceData: "00" + "400a0b0c0d" + "21c35a" + "33655050")
        try await Self.sighting(observer, Fixture.headphones, serviceData: "00aabbcc")
        let health = try await Self.health(observer, fastPairIgnored: 2)
        #expect(health["data"]?["fast_pair_ignored"] == 2, "\(health)")
        #expect(health["data"]?["telemetry_rejected"] == 0, "the messages themselves were fine")

        // A rename publishes the state at once, after the sightings before it.
        _ = try await observer.request("accessory/rename", #""id":"\#(Self.buds)","name":"Carol's buds""#)
        let renamed = try #require(await observer.waitFor(Self.state) { $0["name"] == "Carol's buds" })
        #expect(renamed["battery"] == ["left": 80, "right": 99, "case": 42], "the ignored payload changed nothing")
        #expect(renamed["available"] == true)
        let headphonesState = "aabridge/accessory/\(Fixture.headphonesTopic)"
        _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.headphones)","name":"Bob's""#)
        let headphones = try #require(await observer.waitFor(headphonesState) { $0["name"] == "Bob's" })
        #expect(headphones["available"] == true, "an ignored Fast Pair part does not stop the sighting")
        #expect(headphones["battery"] == .null)
        #expect(
            !observer.json(on: "aabridge/bridge/log").contains { $0["message"]?.stringValue?.contains("Fast Pair") == true },
            "no warning: an unknown layout is logged at debug level only")

        #expect(await runner.stop() == 0)
        await observer.disconnect()
    }

    // MARK: The Ingest stage alone

    /// Ingest on ``yaml(server:database:)``, knowing `accessories` as (id, product).
    static func ingest(knowing accessories: [(String, String)]) throws -> IngestFeed {
        let yaml = Self.yaml(server: "mqtt://127.0.0.1:1", database: "/nonexistent/db.sqlite3")
        let configuration = try ConfigurationLoader.load(yaml: yaml, environment: [:], hostname: "testhost").get()
        let known = try accessories.map { id, product in
            Accessory(
                id: try #require(BluetoothAddress(id)), displayName: id, product: product, descriptor: DiscoveryDescriptor(),
                state: .authorized)
        }
        let engine = EngineHolder(BridgeEngine(configuration: configuration.engine, restored: RestoredState(accessories: known)))
        return IngestFeed(configuration: configuration, engine: EngineView(engine))
    }

    /// One OpenMQTTGateway message through `ingest`; `extra` adds JSON members.
    static func ingest(_ ingest: inout IngestFeed, _ address: String, serviceData: String, extra: String = "") -> FedOutcome {
        let topic = "home/gw1/BTtoMQTT/\(address.replacingOccurrences(of: ":", with: ""))"
        let payload = #"{"id":"\#(address)","rssi":-60,"servicedatauuid":"fe2c","servicedata":"\#(serviceData)"\#(extra)}"#
        let message = MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: false)
        return ingest.ingest(message, route: ingest.router.route(topic), at: Timestamp(milliseconds: 1))
    }

    static func sighting(_ outcome: FedOutcome) -> AdvertisementSighting? {
        guard case .telemetry(.sighting(let sighting), _, _) = outcome.effect else { return nil }
        return sighting
    }

    @Test("Ingest: a known accessory's Fast Pair battery becomes a decoded battery without placement, whatever the decoder")
    func ingestBattery() throws {
        var ingest = try Self.ingest(knowing: [(Self.buds, "Pixel Buds Pro"), (Fixture.headphones, "Acme Studio Headphones")])
        let outcome = Self.ingest(&ingest, Self.buds, serviceData: "00400a0b0c0d21c35a3355e47f")
        let decoded = try #require(Self.sighting(outcome)?.decoded)
        #expect(decoded == AdvertisementSighting.Decoded(battery: Battery(left: 85, right: 100)))
        #expect(outcome.fastPairIgnored == nil && outcome.rejection == nil)
        // Discoverable (the model ID) and account data without a battery say nothing to the engine.
        #expect(Self.sighting(Self.ingest(&ingest, Self.buds, serviceData: "2d7a23"))?.decoded == nil)
        #expect(Self.sighting(Self.ingest(&ingest, Self.buds, serviceData: "0000"))?.decoded == nil)
    }

    @Test("Ingest: an unknown layout of a known accessory is reported for counting, not rejected; unknown advertisers are not read")
    func ingestUnknownLayout() throws {
        var ingest = try Self.ingest(knowing: [(Fixture.headphones, "Acme Studio Headphones")])
        let acme = Self.ingest(&ingest, Fixture.headphones, serviceData: "00aabbcc")
        #expect(Self.sighting(acme)?.accessoryID == BluetoothAddress(Fixture.headphones), "the sighting goes on")
        #expect(Self.sighting(acme)?.decoded == nil)
        #expect(acme.rejection == nil && acme.notice == nil)
        #expect(acme.fastPairIgnored?.accessory == BluetoothAddress(Fixture.headphones))
        #expect(acme.fastPairIgnored?.reason == .fieldOverrun(type: 10, length: 10, available: 2))
        #expect(acme.fastPairIgnored?.data == [0x00, 0xAA, 0xBB, 0xCC])

        // Nobody's: neither read nor counted, valid or not.
        let stranger = "D9:00:00:00:00:01"
        #expect(Self.ingest(&ingest, stranger, serviceData: "00aabbcc").fastPairIgnored == nil)
        #expect(Self.sighting(Self.ingest(&ingest, stranger, serviceData: "00400a0b0c0d21c35a3355e47f"))?.decoded == nil)
    }

    @Test("Ingest: the product's own decoder speaks first; Fast Pair never replaces its battery")
    func ingestDecoderFirst() throws {
        var ingest = try Self.ingest(knowing: [(Fixture.airPods, "AirPods Pro")])
        // Proximity pairing: left bud in an ear at 50 % (Fixture.advertisementPayload's bytes).
        let apple = #","manufacturerdata":"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8""#
        let outcome = Self.ingest(&ingest, Fixture.airPods, serviceData: "00400a0b0c0d21c35a3355e47f", extra: apple)
        let decoded = try #require(Self.sighting(outcome)?.decoded)
        #expect(decoded.battery == Battery(left: 50, leftCharging: false))
        #expect(decoded.placement == .inEar)
    }

    @Test("Diagnostics: every ignored payload is counted")
    func diagnosticsCount() {
        let diagnostics = Diagnostics(logger: BridgeLogger(minimum: .error))
        for milliseconds in [1, 2, 70_000] as [Int64] {
            diagnostics.ignoreFastPair(
                BluetoothAddress(Fixture.headphones)!, reason: .empty, data: [], at: Timestamp(milliseconds: milliseconds))
        }
        #expect(diagnostics.counters.fastPairIgnored == 3)
        #expect(diagnostics.counters.telemetryRejected == 0)
    }
}
