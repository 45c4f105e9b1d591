import Foundation
import JSON
import TestSupport
import Testing

/// household.md, "What gateways and advertisements really say", over a real mosquitto: the
/// figures and problems of each heard gateway, and ESPresense's reports by IRK.
@Suite("Gateways that say what they cannot do")
struct GatewayProblemsFlowTests {
    static let gateways = "aabridge/bridge/gateways"
    static let log = "aabridge/bridge/log"
    static let irk = "ec0234a357c8ad05341010a60a397d9b"

    static func componentIDs(_ device: JSONValue?) -> [String] {
        guard case .object(let members)? = device?["components"] else { return [] }
        return members.map(\.0)
    }

    static func problems(_ gateways: JSONValue?, _ entry: String, heard: String) -> [String] {
        AvailabilityFlowTests.gateway(gateways, entry, heard: heard)?["problems"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? []
    }

    /// An OpenMQTTGateway advertisement without manufacturer data (`pubadvdata` off), from a
    /// different random address each time.
    static func bareAdvertisement(_ observer: Observer, node: String, index: Int) async throws {
        let address = String(format: "5A:00:00:00:%02X:%02X", index / 256, index % 256)
        try await observer.publish(
            "home/\(node)/BTtoMQTT/\(address.replacingOccurrences(of: ":", with: ""))",
            #"{"id":"\#(address)","mac_type":1,"rssi":-70}"#)
    }

    @Test("a node that sends 50 advertisements without manufacturer data shows no_manufacturer_data, logged once; one with data clears it")
    func noManufacturerData() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer in
            for index in 0..<49 { try await Self.bareAdvertisement(observer, node: "hall", index: index) }
            _ = try await observer.request("health")
            #expect(Self.problems(observer.json(on: Self.gateways).last, "omg", heard: "hall").isEmpty, "not before 50")
            for index in 49..<120 { try await Self.bareAdvertisement(observer, node: "hall", index: index) }
            let shown = await observer.waitFor(Self.gateways) { Self.problems($0, "omg", heard: "hall") == ["no_manufacturer_data"] }
            let hall = AvailabilityFlowTests.gateway(shown, "omg", heard: "hall")
            #expect(hall?["with_manufacturer_data"]?.doubleValue == 0)
            #expect((hall?["advertisements_per_min"]?.intValue ?? 0) >= 50)
            #expect(hall?["attributed"] == 0)
            #expect(hall?["problems"]?.arrayValue?.first?["message"]?.stringValue?.contains("pubadvdata") == true)
            // The entry carries its gateways' problems too.
            #expect(AvailabilityFlowTests.gateway(shown, "omg")?["problems"]?.arrayValue?.first?["code"] == "no_manufacturer_data")
            _ = try await observer.request("health")
            let lines = observer.json(on: Self.log).filter { ($0["message"]?.stringValue ?? "").contains("pubadvdata") }
            #expect(lines.count == 1, "logged once: \(lines)")
            #expect(lines.first?["level"] == "warning")
            #expect(lines.first?["message"]?.stringValue?.hasPrefix("gateway hall: ") == true)
            // Home Assistant: the node's diagnostic sensor on the bridge device.
            let homeAssistant = SimulatedHomeAssistant(observer: observer)
            let bridge = SimulatedHomeAssistantTests.bridge
            let device = await homeAssistant.waitForDevice(bridge) { device in
                Self.componentIDs(device).contains { $0.hasPrefix("gateway_hall_") }
            }
            let sensor = try #require(Self.componentIDs(device).first { $0.hasPrefix("gateway_hall_") })
            #expect(try homeAssistant.state(bridge, sensor) == "no_manufacturer_data")
            #expect(try homeAssistant.attributes(bridge, sensor)?["entry"] == "omg")
            // One advertisement with manufacturer data: the node can give what the bridge needs.
            let before = observer.json(on: Self.gateways).count
            try await observer.publish(
                "home/hall/BTtoMQTT/5B0000000001", #"{"id":"5B:00:00:00:00:01","mac_type":1,"manufacturerdata":"4c000215","rssi":-70}"#)
            await observer.waitFor(Self.gateways, after: before) { Self.problems($0, "omg", heard: "hall").isEmpty }
            #expect(try homeAssistant.state(bridge, sensor) == "ok")
        }
    }

    @Test("an ESPresense node while a paired Apple accessory has no IRK shows espresense_needs_irk; the IRK given, it goes")
    func espresenseNeedsIRK() async throws {
        try await withBridge { _, observer in
            try await observer.publish(
                "espresense/devices/apple:1006:10-12/kitchen",
                #"{"mac":"6a0102030405","id":"apple:1006:10-12","rssi@1m":-65,"rssi":-84.77,"distance":2.49}"#)
            let shown = await observer.waitFor(Self.gateways) { Self.problems($0, "esp", heard: "kitchen") == ["espresense_needs_irk"] }
            let message = AvailabilityFlowTests.gateway(shown, "esp", heard: "kitchen")?["problems"]?.arrayValue?.first?["message"]
            #expect(message?.stringValue?.contains("Alice's AirPods") == true, "\(String(describing: message))")
            #expect(message?.stringValue?.contains("known_irks") == true)
            await observer.waitFor(Self.log) { ($0["message"]?.stringValue ?? "").contains("gateway kitchen: ESPresense") }
            // Only Apple accessories count: the OpenMQTTGateway entry has no such problem.
            #expect(AvailabilityFlowTests.gateway(shown, "omg")?["problems"] == [])
            let before = observer.json(on: Self.gateways).count
            let keys = try await observer.request("accessory/keys", #""id":"\#(Fixture.airPods)","irk":"\#(Self.irk)""#)
            #expect(keys["status"] == "ok")
            await observer.waitFor(Self.gateways, after: before) { Self.problems($0, "esp", heard: "kitchen").isEmpty }
        }
    }

    /// An ESPresense report of a device it resolved with one of its `known_irks`, with the
    /// fields `BleFingerprint::fill` writes (src/BleFingerprint.cpp of ESPresense/ESPresense at
    /// a6f1105e7943c4c1426ecbd0b1d84106eaaf1dba: mac, id `irk:<hex>` from
    /// `BleFingerprint::fingerprintAddress`, rssi@1m, rssi with two decimals, rxAdj, rssiVar,
    /// distance, var, int).
    static func irkReport(_ observer: Observer, irk: String, room: String, rssi: String = "-67.20") async throws {
        try await observer.publish(
            "espresense/devices/irk:\(irk)/\(room)",
            #"{"mac":"4d5e6f708192","id":"irk:\#(irk)","rssi@1m":-59,"rssi":\#(rssi),"rxAdj":0,"rssiVar":1.64,"distance":1.84,"var":0.12,"int":1032}"#
        )
    }

    @Test("irk: reports keep the accessory with that IRK available and set its room, in either byte order; the key is never echoed")
    func reportsByIRK() async throws {
        let harness = try BridgeHarness(availabilityTimeoutSeconds: 2, headphonesIRK: Self.irk)
        defer { harness.removeDirectory() }
        try await harness.run(subscribe: ["#"]) { observer in
            let state = "aabridge/accessory/\(Fixture.headphonesTopic)"
            try await Self.irkReport(observer, irk: Self.irk, room: "kitchen")
            let heard = await observer.waitFor(state) { $0["available"] == true && $0["room"] == "kitchen" }
            #expect(heard?["identity"] == "irk")
            #expect(heard?["rssi"] == -67)
            let reversed = KeyByteOrderFlowTests.reversed(Self.irk)
            // Kept available by reports alone, the key as ESPresense may print it the other way round.
            for second in 0..<4 {
                try await Self.irkReport(observer, irk: second % 2 == 0 ? reversed : Self.irk, room: "office", rssi: "-52.00")
                try await Task.sleep(for: .milliseconds(800))
            }
            let office = await observer.waitFor(state) { $0["room"] == "office" }
            #expect(office?["available"] == true)
            #expect(observer.json(on: "\(state)/availability").last?["state"] == "online")
            // A key nobody has, and ids that only look like one: nothing counts, nothing is said of them.
            try await Self.irkReport(observer, irk: "00112233445566778899aabbccddeeff", room: "hall")
            try await observer.publish("espresense/devices/irk:zz/hall", #"{"mac":"4d5e6f708193","id":"irk:zz","rssi":-70}"#)
            try await observer.publish(
                "espresense/devices/irk:\(Self.irk)/hall", #"{"mac":"not a mac","id":"irk:\#(Self.irk)","rssi":-70}"#)
            _ = try await observer.request("health")
            for message in observer.messages.elements where !message.topic.hasPrefix("espresense/") {
                let text = message.payloadString.lowercased()
                #expect(!text.contains(Self.irk) && !text.contains(reversed), "\(message.topic): \(text)")
            }
            // The malformed report was rejected, naming neither the topic nor the id.
            let rejections = observer.json(on: "aabridge/bridge/log").filter { ($0["message"]?.stringValue ?? "").contains("hall") }
            #expect(!rejections.isEmpty, "the malformed 'mac' is reported")
        }
    }
}
