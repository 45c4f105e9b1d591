import AccessoryKit
import Configuration
import Foundation
import JSON
import MQTT
import Storage
import Testing

@testable import Bridge
@testable import Telemetry

/// What a neighbour with a radio (or anyone who may publish on a gateway's topic) can make a
/// gateway relay, and what it must not be able to do with it (issue 49).
@Suite("Forged and replayed telemetry")
struct ForgedTelemetryTests {
    /// An AirPods Pro proximity-pairing frame (the end-to-end configuration's product), in ear.
    static let frame = "4c000719010e200b990f310000" + String(repeating: "00", count: 16)

    static func message(_ topic: String, _ payload: String, retain: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atMostOnce, retain: retain)
    }

    @Test("retained telemetry is refused with its own reason and attributes nothing; a retained gateway status is taken")
    func retainedTelemetryRefused() throws {
        var feed = try IngestTests.ingest()
        let topic = "home/kitchen/BTtoMQTT/F1E2D3C4B5A7"
        let payload = #"{"id":"F1:E2:D3:C4:B5:A7","rssi":-40,"manufacturerdata":"\#(Self.frame)"}"#
        let retained = feed.ingest(
            Self.message(topic, payload, retain: true), route: feed.router.route(topic), at: Timestamp(milliseconds: 1))
        let refusals = retained.outcome.compactMap { if case .refuse(let refusal) = $0 { refusal } else { nil } }
        #expect(refusals.map(\.reason) == [.retained])
        #expect(refusals.first?.message.contains("mosquitto_pub -r -n -t 'home/kitchen/BTtoMQTT/F1E2D3C4B5A7'") == true)
        guard case .none = retained.effect else {
            Issue.record("a retained frame must not reach the engine, got \(retained.effect)")
            return
        }
        #expect(feed.gatewaysPayload(at: Timestamp(milliseconds: 1)).arrayValue?.first?["heard"]?.arrayValue?.isEmpty == true)
        // A gateway's will is retained by design: its status is taken.
        let status = feed.ingest(
            Self.message("home/kitchen/LWT", "offline", retain: true), route: feed.router.route("home/kitchen/LWT"),
            at: Timestamp(milliseconds: 2))
        #expect(status.gatewaysChanged)
    }

    @Test("a retained in-ear frame replayed at start moves nothing; it is counted in telemetry_rejected")
    func retainedTelemetryAtStart() async throws {
        try await InMemoryFlowTests.withRuntime { connection in
            let state = "aabridge/accessory/\(Fixture.speakerTopic)"
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.speakerTopic)"
            connection.deliver(telemetry, #"{"rssi":-42}"#, retain: true)
            connection.deliver(telemetry, #"{"rssi":-71}"#)
            await connection.waitFor(state) { $0["rssi"] == -71 }
            #expect(!connection.json(on: state).contains { $0["rssi"] == -42 }, "the retained copy never counted")
            let health = await connection.request("health", "")
            #expect((health?["data"]?["telemetry_rejected"]?.intValue ?? 0) >= 1)
        }
    }

    /// Ingest knowing Alice's AirPods away (not heard since the start), with the profile and the
    /// room they were last seen with.
    static func awayAirPods(room: String) throws -> IngestFeed {
        let configuration = try IngestTests.configuration()
        let id = try #require(BluetoothAddress(Fixture.airPods))
        let accessory = Accessory(
            id: id, displayName: "Alice's AirPods", product: "AirPods Pro", descriptor: DiscoveryDescriptor(), state: .authorized)
        let restored = RestoredState(
            accessories: [accessory], traces: [id: AccessoryTrace(profile: ProximityProfile(model: 0x200E, colour: 0), room: room)])
        return try IngestTests.ingest(engine: EngineHolder(BridgeEngine(configuration: configuration.engine, restored: restored)))
    }

    /// A fresh address (number `index`) with Alice's profile, heard by the kitchen.
    static func fresh(_ feed: inout IngestFeed, _ index: Int, at milliseconds: Int64) -> FedOutcome {
        let address = String(format: "5A:00:00:00:%02X:%02X", index / 256, index % 256)
        let topic = "home/kitchen/BTtoMQTT/" + address.replacingOccurrences(of: ":", with: "")
        let payload = #"{"id":"\#(address)","mac_type":1,"rssi":-60,"manufacturerdata":"\#(Self.frame)"}"#
        return feed.ingest(Self.message(topic, payload), route: feed.router.route(topic), at: Timestamp(milliseconds: milliseconds))
    }

    @Test("lookalikeHeard: at most a bounded number a second in all, however many fresh addresses; the rest counted")
    func lookalikeEventsBounded() throws {
        var feed = try Self.awayAirPods(room: "bedroom")
        let firstSecond = (0..<40).filter { Self.fresh(&feed, $0, at: 10_000 + Int64($0)).lookalikeHeard }.count
        #expect(firstSecond == LookalikeBoard.eventsPerSecond, "1 event per fresh look-alike before: 40")
        #expect(feed.lookalikes.eventsSuppressed == 40 - LookalikeBoard.eventsPerSecond)
        #expect(Self.fresh(&feed, 0, at: 11_500).lookalikeHeard == false, "once per look-alike: it is one already")
        #expect(Self.fresh(&feed, 1_000, at: 11_600).lookalikeHeard, "a new second admits again")
    }

    @Test("a node that relays many fresh look-alikes of an away accessory shows lookalike_flood on bridge/gateways")
    func lookalikeFloodShown() throws {
        var feed = try Self.awayAirPods(room: "kitchen")
        func problems(of node: String) -> [JSONValue] {
            let heard = feed.gatewaysPayload(at: Timestamp(milliseconds: 20_000)).arrayValue?.first?["heard"]?.arrayValue ?? []
            return heard.first { $0["name"] == .string(node) }?["problems"]?.arrayValue ?? []
        }
        for index in 0..<LookalikeTracker.floodCount {
            _ = Self.fresh(&feed, index, at: 10_000 + Int64(index))
            #expect(problems(of: "kitchen").isEmpty == (index < LookalikeTracker.floodCount - 1), "after \(index + 1)")
        }
        #expect(problems(of: "kitchen").first?["code"] == "lookalike_flood")
    }

    @Test("Home Assistant's bridge device goes out at most once per debounce, however many gateway names appear")
    func discoveryChurnBounded() async throws {
        try await InMemoryRuntime.withConfiguration(homeAssistant: true) { configuration, database in
            let connection = InMemoryConnection()
            let runtime = try BridgeRuntime(configuration: configuration, store: try AccessoryStore(path: database), connection: connection)
            try await InMemoryRuntime.run(runtime, on: connection) {
                let device = "homeassistant/device/aabridge_bridge_aabridge/config"
                await connection.waitFor(device) { _ in true }
                let before = connection.published.messages(on: device).count
                for node in 0..<300 {
                    connection.deliver("home/node\(node)/BTtoMQTT/F1E2D3C4B5A7", #"{"id":"F1:E2:D3:C4:B5:A7","rssi":-60}"#)
                }
                await connection.waitFor("aabridge/bridge/gateways") { ($0.arrayValue?.first?["heard"]?.arrayValue?.count ?? 0) == 256 }
                let during = connection.published.messages(on: device).count - before
                #expect(during <= 1, "the first new gateway at once, the rest after the debounce (one per name before: \(during))")
            }
        }
    }

    /// Issue 49, finding 3: a radio inventing a fresh address of the profile every second or
    /// so kept a rotated accessory from being followed. The decoys make the node flood; heard
    /// once each, they are no rivals, and the real new address is followed.
    @Test("decoys heard once from a flooding node do not keep a rotated accessory from being followed; the node shows the flood")
    func decoysDoNotBlockFollowing() throws {
        var feed = try Self.awayAirPods(room: "kitchen")
        let own = "home/kitchen/BTtoMQTT/" + Fixture.airPods.replacingOccurrences(of: ":", with: "")
        let ownPayload = #"{"id":"\#(Fixture.airPods)","rssi":-60,"manufacturerdata":"\#(Self.frame)"}"#
        for second in Int64(0)...10 {
            _ = feed.ingest(Self.message(own, ownPayload), route: feed.router.route(own), at: Timestamp(milliseconds: second * 1_000))
        }
        var flooded = false
        for index in 0..<LookalikeTracker.floodCount {
            flooded = Self.fresh(&feed, index, at: 11_000 + Int64(index) * 1_000).outcome.lookalikeFloodUntil != nil || flooded
        }
        #expect(flooded, "the node that relays the decoys gets lookalike_flood")
        var lines: [String] = []
        for second in Int64(20)...26 {
            let fed = Self.fresh(&feed, 0x100, at: second * 1_000)
            if let notice = fed.notice { lines.append(notice.message) }
        }
        #expect(lines.contains { $0.hasPrefix("followed accessory \(Fixture.airPods)") }, "\(lines)")
    }

    // MARK: Replayed encrypted bytes (finding 2)

    /// Carol's AirPods Pro with an encryption key, heard from their own address; the clear
    /// status says both buds are in ear (the forged part), the encrypted block what `plaintext`
    /// says (the replayed part).
    static func replayed(plaintext: [UInt8]) throws -> AdvertisementSighting.Decoded? {
        let configuration = try IngestTests.configuration()
        let id = try #require(BluetoothAddress(Fixture.airPods))
        let keyText = "000102030405060708090a0b0c0d0e0f"
        let key = try AccessoryKey.parse(keyText).get()
        let accessory = Accessory(
            id: id, displayName: "Carol's AirPods", product: "AirPods Pro", descriptor: DiscoveryDescriptor(), state: .authorized)
        let restored = RestoredState(accessories: [accessory], keys: [id: AccessoryKeys(encryptionKey: key)])
        var feed = try IngestTests.ingest(engine: EngineHolder(BridgeEngine(configuration: configuration.engine, restored: restored)))
        let encrypted = try #require(ProximityPairing.encrypt(plaintext: plaintext, with: key))
        let frame = "4c000719010e200b990f310000" + Hex.encode(encrypted)
        let topic = "home/kitchen/BTtoMQTT/" + Fixture.airPods.replacingOccurrences(of: ":", with: "")
        let payload = #"{"id":"\#(Fixture.airPods)","rssi":-50,"manufacturerdata":"\#(frame)"}"#
        let fed = feed.ingest(Self.message(topic, payload), route: feed.router.route(topic), at: Timestamp(milliseconds: 1))
        guard case .telemetry(.sighting(let sighting), _, _) = fed.effect else {
            Issue.record("expected a sighting, got \(fed.effect)")
            return nil
        }
        #expect(sighting.accessoryID == id)
        return sighting.decoded
    }

    @Test("with the encryption key, buds that charge are in their case whatever the clear status says; otherwise the clear bytes count")
    func encryptedPartWinsOverTheClearStatus() throws {
        // Both buds charging (0x80 | level), 92 % and 91 %, the case level unknown.
        let charging = try Self.replayed(plaintext: [0x01, 0x80 | 92, 0x80 | 91, 0x7F] + Array(repeating: 0, count: 12))
        #expect(charging?.worn == false)
        #expect(charging?.placement == .offHead)
        #expect(charging?.battery?.leftCharging == true)
        // One bud out of the case (not charging): the clear "in ear" holds for it.
        let oneOut = try Self.replayed(plaintext: [0x01, 92, 0x80 | 91, 0x7F] + Array(repeating: 0, count: 12))
        #expect(oneOut?.worn == true)
        #expect(oneOut?.placement == .inEar)
    }
}
