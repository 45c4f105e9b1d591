import AccessoryKit
import JSON
import Telemetry
import Testing

@testable import Bridge

/// Home Assistant's scanners through the relay integration (format `ha_relay`, issue 54): a node
/// per scanner, the scanner's own `offline`, and the relay's silence, each a problem with its
/// remedy on `bridge/gateways`.
@Suite("Home Assistant relay gateways")
struct RelayGatewayTests {
    static func at(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: 1_800_000_000_000 + Int64(seconds * 1000)) }

    static func tracker() -> GatewayTracker {
        GatewayTracker(configured: [(name: "relay", format: .haRelay), (name: "omg", format: .openmqttgateway)])
    }

    static func problems(_ tracker: GatewayTracker, _ node: String, at seconds: Double, entry: Int = 0) -> [String] {
        let heard = tracker.payload(at: at(seconds)).arrayValue?[entry]["heard"]?.arrayValue ?? []
        let entry = heard.first { $0["name"] == .string(node) }
        return (entry?["problems"]?.arrayValue ?? []).compactMap { $0["code"]?.stringValue }
    }

    @Test("a scanner the relay says offline has scanner_offline until it is online again")
    func scannerOffline() {
        var tracker = Self.tracker()
        _ = tracker.advertisement("bedroom_proxy", through: 0, withManufacturerData: true, attributed: true, at: Self.at(0))
        let wentOffline = tracker.status("bedroom_proxy", through: 0, online: false, at: Self.at(1))
        #expect(wentOffline)
        let appeared = tracker.evaluate("bedroom_proxy", through: 0, at: Self.at(1))
        #expect(appeared.map(\.problem) == [.scannerOffline])
        #expect(appeared.first?.message.contains("Bluetooth") == true)
        #expect(Self.problems(tracker, "bedroom_proxy", at: 2) == ["scanner_offline"])
        let cameBack = tracker.status("bedroom_proxy", through: 0, online: true, at: Self.at(3))
        #expect(cameBack)
        let nothingNew1 = tracker.evaluate("bedroom_proxy", through: 0, at: Self.at(3))
        #expect(nothingNew1.isEmpty)
        #expect(Self.problems(tracker, "bedroom_proxy", at: 4).isEmpty)
    }

    @Test("three minutes without even a heartbeat is relay_silent, said once; the next heartbeat ends it")
    func relaySilent() {
        var tracker = Self.tracker()
        _ = tracker.status("living_room_proxy", through: 0, online: true, at: Self.at(0))
        let nothingNew2 = tracker.evaluateAll(at: Self.at(120))
        #expect(nothingNew2.isEmpty)
        // A heartbeat (an `online` already known) is traffic: the silence starts again from it.
        let changed = tracker.status("living_room_proxy", through: 0, online: true, at: Self.at(100))
        #expect(!changed)
        let nothingNew3 = tracker.evaluateAll(at: Self.at(250))
        #expect(nothingNew3.isEmpty)
        let appeared = tracker.evaluateAll(at: Self.at(281))
        #expect(appeared.map(\.problem) == [.relaySilent])
        #expect(appeared.first?.message.contains("MQTT integration") == true)
        let nothingNew4 = tracker.evaluateAll(at: Self.at(400))
        #expect(nothingNew4.isEmpty)
        // An IRK changing (no time) keeps the silence as it was.
        let nothingNew5 = tracker.needIRK(["Alice's AirPods"], at: nil)
        #expect(nothingNew5.isEmpty)
        #expect(Self.problems(tracker, "living_room_proxy", at: 400) == ["relay_silent"])
        _ = tracker.status("living_room_proxy", through: 0, online: true, at: Self.at(401))
        let nothingNew6 = tracker.evaluate("living_room_proxy", through: 0, at: Self.at(401))
        #expect(nothingNew6.isEmpty)
        #expect(Self.problems(tracker, "living_room_proxy", at: 402).isEmpty)
    }

    @Test("the area the relay sends is the node's on bridge/gateways, a change of it a change of the list")
    func area() {
        var tracker = Self.tracker()
        let first = tracker.advertisement(
            "living_room_proxy", through: 0, withManufacturerData: true, attributed: false, at: Self.at(0), area: "Living room")
        #expect(first.changed)
        let same = tracker.advertisement(
            "living_room_proxy", through: 0, withManufacturerData: true, attributed: false, at: Self.at(1), area: "Living room")
        #expect(!same.changed)
        let moved = tracker.advertisement(
            "living_room_proxy", through: 0, withManufacturerData: true, attributed: false, at: Self.at(2), area: "Lounge")
        #expect(moved.changed)
        let heard = tracker.payload(at: Self.at(3)).arrayValue?[0]["heard"]?.arrayValue?.first
        #expect(heard?["area"] == "Lounge")
    }

    @Test("another format's quiet gateway is not silent, nor offline a problem")
    func otherFormats() {
        var tracker = Self.tracker()
        _ = tracker.advertisement("kitchen", through: 1, withManufacturerData: true, attributed: false, at: Self.at(0))
        _ = tracker.status("kitchen", through: 1, online: false, at: Self.at(1))
        let nothingNew7 = tracker.evaluateAll(at: Self.at(1000))
        #expect(nothingNew7.isEmpty)
        #expect(Self.problems(tracker, "kitchen", at: 1000, entry: 1).isEmpty)
    }

    @Test("the relay's payload is OpenMQTTGateway's shape: the node is the scanner, its own keys are ignored")
    func parse() {
        #expect(GatewayFormat.haRelay.defaultTopic() == "aabridge_relay/+/BTtoMQTT/+")
        #expect(GatewayFormat.haRelay.defaultStatusTopic == "aabridge_relay/+/LWT")
        let parser = TelemetryParser(format: .haRelay)
        let payload =
            #"{"id":"F1:E2:D3:C4:B5:A6","rssi":-55,"manufacturerdata":"4c000719010e202a850600000a7d9fff27234873d4305e0fed1b39e2b8","#
            + #""scanner":"Living room proxy","area":"Living room"}"#
        let topic = "aabridge_relay/living_room_proxy/BTtoMQTT/F1E2D3C4B5A6"
        guard case .advertisement(let advertisement) = parser.parse(topic: topic, payload: Array(payload.utf8), receivedAt: 0) else {
            Issue.record("not an advertisement")
            return
        }
        #expect(advertisement.gateway == "living_room_proxy")
        #expect(advertisement.rssi == -55)
        #expect(advertisement.manufacturerData.first?.companyIdentifier == 0x004C)
        #expect(advertisement.gatewayArea == "Living room")
        let fromGateway = TelemetryParser(format: .openmqttgateway).parse(
            topic: "home/kitchen/BTtoMQTT/F1E2D3C4B5A6", payload: Array(payload.utf8), receivedAt: 0)
        guard case .advertisement(let other) = fromGateway else {
            Issue.record("not an advertisement")
            return
        }
        #expect(other.gatewayArea == nil)
        let status = parser.parse(topic: "aabridge_relay/bedroom_proxy/LWT", payload: Array("offline".utf8), receivedAt: 0)
        guard case .gatewayStatus(let status) = status else {
            Issue.record("not a status")
            return
        }
        #expect(status.gateway == "bedroom_proxy" && status.state == .offline)
    }
}
