import Foundation
import JSON
import LocalProcess
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// The head-tracking session over a real mosquitto (domain.md, iOS 27): registered with
/// `headTracking`, turned on from Home Assistant's switch, IMU frames from native telemetry
/// forwarded on `accessory/<ID>/imu`, the refusals on `accessory/<ID>/error`, the caps counted
/// in `/metrics`, turned off, removed.
@Suite("Head tracking over MQTT")
struct HeadTrackingFlowTests {
    static let spatial = "D1:B2:C3:D4:E5:F6"
    static let spatialTopic = "D1B2C3D4E5F6"
    static let products = """
          - name: Spatial Buds
            hardware: inEarBud
            capabilities: [audioSwitching, placement, headTracking, audioSpatialization]
            descriptor:
              bluetooth_company_identifier: 0x004C
              bluetooth_manufacturer_data_blob: "0719010e21"
              bluetooth_manufacturer_data_mask: "ffffffffff"
        """
    static let accessories = """
          - id: "\(spatial)"
            name: Carol's Spatial Buds
            product: Spatial Buds
        """

    let state = "aabridge/accessory/\(spatialTopic)"
    let imu = "aabridge/accessory/\(spatialTopic)/imu"
    let error = "aabridge/accessory/\(spatialTopic)/error"
    let telemetry = "aabridge/telemetry/relay/\(spatialTopic)"

    static func hex(_ count: Int, seed: Int = 0) -> String {
        (0..<count).map { String(format: "%02x", ($0 * 31 + seed) & 0xFF) }.joined()
    }

    static func metrics(_ port: Int) async throws -> [MetricsEndpointTests.Sample] {
        let response = try await HTTPTestClient.fetch(port: port, "GET", "/metrics")
        return try MetricsEndpointTests.parse(response.text).samples
    }

    static func value(_ samples: [MetricsEndpointTests.Sample], _ name: String, _ labels: [String: String] = [:]) -> Int {
        Int(MetricsEndpointTests.value(samples, name, labels) ?? -1)
    }

    @Test("register, the switch on, frames forwarded, 0/71 bytes and inactive refused, a flood capped and counted, off, removed")
    func session() async throws {
        let port = try FreePort.find()
        let harness = try BridgeHarness(
            mqttExtra: "http:\n  listen: 127.0.0.1:\(port)\n", homeAssistant: true,
            extraProducts: Self.products, extraAccessories: Self.accessories)
        defer { harness.removeDirectory() }
        try await harness.run(subscribe: ["aabridge/#", "homeassistant/#"]) { observer in
            // Registered with headTracking: a session, inactive.
            let registered = try await observer.request(
                "accessory/register", #""id":"\#(Self.spatial)","capabilities":["audioSwitching","headTracking"]"#)
            #expect(registered["status"] == "ok", "\(registered)")
            #expect(registered["data"]?["capabilities"] == ["audioSwitching", "headTracking"])
            await observer.waitFor(state) { $0["head_tracking"] == "inactive" }

            // Inactive: a frame is refused notActivated, and nothing is forwarded.
            try await observer.publish(telemetry, #"{"imu":"0102"}"#)
            let inactive = await observer.waitFor(error) { $0["code"] == "notActivated" }
            #expect(inactive?["operation"] == "headTracking")
            #expect(inactive?["field"] == .null)
            #expect(inactive?["message"]?.stringValue?.isEmpty == false)

            // Home Assistant's switch, pressed as Home Assistant would: its payload_on on its command topic.
            let config = "homeassistant/device/aabridge_\(Self.spatialTopic)/config"
            let discovery = await observer.waitFor(config) { $0["components"]?["head_tracking"] != nil }
            let toggle = try #require(discovery?["components"]?["head_tracking"])
            let command = try #require(toggle["command_topic"]?.stringValue)
            #expect(command == "aabridge/bridge/request/accessory/head_tracking")
            let on = try #require(toggle["payload_on"]?.stringValue)
            let off = try #require(toggle["payload_off"]?.stringValue)
            let transaction = try JSONParser.parse(Array(on.utf8))["transaction"]
            try await observer.publish(command, on)
            let answered = await observer.waitFor("aabridge/bridge/response/accessory/head_tracking") { $0["transaction"] == transaction }
            #expect(answered?["status"] == "ok", "\(String(describing: answered))")
            #expect(answered?["data"]?["head_tracking"] == "active")
            await observer.waitFor(state) { $0["head_tracking"] == "active" }
            await observer.waitFor("aabridge/bridge/event") {
                $0["type"] == "headTrackingChanged" && $0["accessory"]?["id"] == .string(Self.spatial) && $0["raw"] == .null
            }

            // Active: 1 and 70 bytes forwarded unchanged, not retained, QoS 0.
            for (count, seed) in [(1, 7), (70, 3)] {
                let frame = Self.hex(count, seed: seed)
                try await observer.publish(telemetry, #"{"imu":"\#(frame.uppercased())"}"#)
                await observer.waitFor(imu) { $0 == ["imu": .string(frame)] }
            }
            let forwarded = observer.messages(on: imu)
            #expect(forwarded.count == 2)
            #expect(forwarded.allSatisfy { !$0.retain && $0.qos == .atMostOnce })

            // 0 and 71 bytes: invalidDataSize, a second apart (one error a second per accessory).
            for payload in [#"{"imu":""}"#, #"{"imu":"\#(Self.hex(71))"}"#] {
                try await Task.sleep(for: .milliseconds(1_100))
                let before = observer.messages(on: error).count
                try await observer.publish(telemetry, payload)
                let refused = await observer.waitFor(error, after: before) { $0["code"] == "invalidDataSize" }
                #expect(refused?["operation"] == "headTracking")
            }
            #expect(observer.messages(on: imu).count == 2, "nothing refused is forwarded")

            // A flood: 600 valid frames as fast as the relay can send them. At most 200 a second
            // go out; every one is either forwarded or counted as dropped.
            let flood = 600
            let started = ContinuousClock.now
            for index in 0..<flood {
                observer.client.enqueue(
                    topic: telemetry, payload: Array(#"{"imu":"\#(Self.hex(8, seed: index))"}"#.utf8), qos: .atMostOnce, retain: false)
            }
            var samples: [MetricsEndpointTests.Sample] = []
            for _ in 0..<100 {
                samples = try await Self.metrics(port)
                let counted =
                    Self.value(samples, "aabridge_head_tracking_frames_total")
                    + Self.value(samples, "aabridge_head_tracking_frames_dropped_total")
                if counted >= flood + 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let elapsed = ContinuousClock.now - started
            let total = Self.value(samples, "aabridge_head_tracking_frames_total")
            let dropped = Self.value(samples, "aabridge_head_tracking_frames_dropped_total")
            #expect(total + dropped == flood + 2, "every frame forwarded or counted: \(total) + \(dropped)")
            #expect(dropped > 0, "the flood was capped")
            let seconds = Int(elapsed.components.seconds) + 1
            #expect(total - 2 <= 200 * (seconds + 1), "at most 200 a second: \(total - 2) in \(elapsed)")
            await observer.waitFor(imu, after: total - 1)
            #expect(observer.messages(on: imu).count == total, "what /metrics counts is what went out")

            // Off from the switch: inactive again; frames refused notActivated, a burst of them
            // published once a second, the rest counted.
            try await observer.publish(command, off)
            await observer.waitFor(state) { $0["head_tracking"] == "inactive" }
            try await Task.sleep(for: .milliseconds(1_100))
            let errorsBefore = observer.messages(on: error).count
            let refusedBefore = Self.value(try await Self.metrics(port), "aabridge_head_tracking_refusals_dropped_total")
            for _ in 0..<20 { try await observer.publish(telemetry, #"{"imu":"0102"}"#) }
            await observer.waitFor(error, after: errorsBefore) { $0["code"] == "notActivated" }
            _ = try await observer.request("health") // answered after the 20 frames were handled
            let published = observer.messages(on: error).count - errorsBefore
            let refusedAfter = Self.value(try await Self.metrics(port), "aabridge_head_tracking_refusals_dropped_total")
            #expect(published >= 1 && published <= 2, "one error a second: \(published)")
            #expect(refusedAfter - refusedBefore == 20 - published)
            let after = try await Self.metrics(port)
            #expect(Self.value(after, "aabridge_head_tracking_refusals_total", ["code": "invalidDataSize"]) == 2)
            #expect(Self.value(after, "aabridge_head_tracking_frames_total") == total, "nothing forwarded while inactive")

            // On again, then removed: the session ends with the accessory, its frames are nobody's.
            try await observer.publish(command, on)
            await observer.waitFor(state) { $0["head_tracking"] == "active" }
            let events = observer.json(on: "aabridge/bridge/event").count
            let removed = try await observer.request("accessory/remove", #""id":"\#(Self.spatial)""#)
            #expect(removed["status"] == "ok")
            await observer.waitFor("aabridge/bridge/event", after: events) { $0["type"] == "accessoryRemoved" }
            let types = observer.json(on: "aabridge/bridge/event").dropFirst(events).compactMap { $0["type"]?.stringValue }
            #expect(types.contains("headTrackingChanged"))
            await observer.waitFor(config) { $0 == .null }
            let imuBefore = observer.messages(on: imu).count
            let errorsAtRemoval = observer.messages(on: error).count
            try await Task.sleep(for: .milliseconds(1_100))
            try await observer.publish(telemetry, #"{"imu":"0102"}"#)
            _ = try await observer.request("health") // answered after the frame was handled
            #expect(observer.messages(on: imu).count == imuBefore)
            #expect(observer.messages(on: error).count == errorsAtRemoval)
        }
    }

    @Test("accessory/head_tracking refusals: without headTracking, never registered, a bad payload; nothing changes")
    func refusals() async throws {
        let harness = try BridgeHarness(extraProducts: Self.products, extraAccessories: Self.accessories)
        defer { harness.removeDirectory() }
        try await harness.run { observer in
            let never = try await observer.request("accessory/head_tracking", #""id":"\#(Self.spatial)","active":true"#)
            #expect(never["error"]?["code"] == "invalidRequest")
            #expect(never["error"]?["domain"] == "AccessoryControlDevice")
            _ = try await observer.request("accessory/register", #""id":"\#(Self.spatial)","capabilities":["audioSpatialization"]"#)
            let without = try await observer.request("accessory/head_tracking", #""id":"\#(Self.spatial)","active":true"#)
            #expect(without["error"]?["code"] == "invalidRequest")
            #expect(without["error"]?["message"]?.stringValue?.contains("headTracking") == true)
            let published = await observer.waitFor(error) { $0["operation"] == "headTracking" }
            #expect(published?["field"] == "deviceCapabilities")
            for members in [#""id":"\#(Self.spatial)""#, #""id":"\#(Self.spatial)","active":"yes""#, #""active":true"#] {
                let bad = try await observer.request("accessory/head_tracking", members)
                #expect(bad["error"]?["code"] == "invalidRequest", "\(members)")
            }
            let current = try await observer.request("accessory/current", #""id":"\#(Self.spatial)""#)
            #expect(current["data"]?["configuration"]?["capabilities"] == ["audioSpatialization"])
            await observer.waitFor(state) { $0["head_tracking"] == .null && $0["capabilities"] == ["audioSpatialization"] }
            // A product without the capabilities cannot register them.
            let notCapable = try await observer.request(
                "accessory/register", #""id":"\#(Fixture.speaker)","capabilities":["audioSwitching","headTracking"]"#)
            #expect(notCapable["error"]?["code"] == "accessoryNotCapable")
        }
    }
}
