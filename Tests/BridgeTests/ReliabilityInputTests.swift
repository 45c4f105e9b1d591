import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Hostile input against the in-process runtime: oversize payloads, deep nesting, invalid
/// UTF-8, names that look like topic levels, and floods of invented addresses. Each is
/// answered or counted, none changes state it must not, and the bridge stays responsive.
@Suite("Reliability: hostile input")
struct ReliabilityInputTests {
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"

    /// Publishes raw bytes (what `mosquitto_pub -f` would send).
    static func publish(_ observer: Observer, _ topic: String, _ bytes: [UInt8]) async throws {
        try await observer.client.publishAcknowledged(topic: topic, payload: bytes, qos: .atLeastOnce)
    }

    @Test("oversize request and telemetry payloads: refused or counted, the bridge answers the next request")
    func oversize() async throws {
        try await withBridge { _, observer async throws in
            let huge = #"{"id":"\#(Fixture.airPods)","name":""# + String(repeating: "x", count: 200_000) + #"","transaction":"big"}"#
            try await observer.publish("aabridge/bridge/request/accessory/rename", huge)
            let refused = await observer.waitFor("aabridge/bridge/response/accessory/rename") { $0["error"] != nil }
            #expect(refused?["error"]?["code"] == "invalidRequest")
            #expect(refused?["error"]?["message"]?.stringValue?.contains("bytes") == true)
            #expect((refused.map { $0.serialized.utf8.count } ?? 0) < 4096, "the response does not echo the payload")

            let before = try await observer.request("health")["data"]?["messages_in"]?.intValue ?? 0
            // Above mqtt.max_packet_size (256 KiB), announced in CONNECT: the broker drops it for
            // the bridge, which never reads it (nothing arrives, nothing is counted).
            try await Self.publish(observer, Self.telemetry, Array(repeating: UInt8(ascii: " "), count: 1_000_000))
            // Above the parsers' 64 KiB but within the packet limit: read, refused, counted.
            try await Self.publish(observer, Self.telemetry, Array(repeating: UInt8(ascii: " "), count: 100_000))
            let health = try await observer.request("health")
            #expect((health["data"]?["telemetry_rejected"]?.intValue ?? 0) == 1)
            // Since `before`: the 100 kB message and this health request; the 1 MB one never arrived.
            #expect((health["data"]?["messages_in"]?.intValue ?? 0) - before == 2)
            let state = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(state["error"] == nil)
        }
    }

    @Test("JSON nested 100,000 levels deep (request, telemetry, /set): refused, no stack overflow")
    func deepNesting() async throws {
        try await withBridge { _, observer async throws in
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let deepObject = String(repeating: #"{"a":"#, count: 50_000) + "1" + String(repeating: "}", count: 50_000)
            try await observer.publish("aabridge/bridge/request/picker/show", deep)
            try await observer.publish(
                "aabridge/bridge/request/picker/show", String(repeating: "[", count: 40) + String(repeating: "]", count: 40))
            try await observer.publish(Self.telemetry, deepObject)
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", deepObject)
            try await observer.publish("home/gw1/BTtoMQTT/F1E2D3C4B5A6", deep)
            let refused = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.filter { $0.topic == "aabridge/bridge/response/picker/show" }.count >= 2
            }
            #expect(refused)
            for response in observer.json(on: "aabridge/bridge/response/picker/show") {
                #expect(response["error"]?["code"] == "invalidRequest")
            }
            #expect(
                observer.json(on: "aabridge/bridge/response/picker/show").last?["error"]?["message"]?.stringValue?.contains("nested")
                    == true)
            let health = try await observer.request("health")
            #expect(health["data"] != nil)
        }
    }

    @Test("invalid UTF-8 in a request, a name and telemetry: refused, nothing renamed, nothing garbled published")
    func invalidUTF8() async throws {
        try await withBridge { _, observer async throws in
            var rename = Array(#"{"id":"\#(Fixture.airPods)","name":"ab"#.utf8)
            rename += [0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80] // invalid bytes, an overlong, a surrogate
            rename += Array(#"","transaction":"utf8"}"#.utf8)
            try await Self.publish(observer, "aabridge/bridge/request/accessory/rename", rename)
            let refused = await observer.waitFor("aabridge/bridge/response/accessory/rename") { $0["error"] != nil }
            #expect(refused?["error"]?["code"] == "invalidRequest")
            try await Self.publish(observer, Self.telemetry, [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])
            try await Self.publish(observer, "aabridge/bridge/request/health", [0xC0, 0x80])
            await observer.waitFor("aabridge/bridge/response/health") { $0["error"]?["code"] == "invalidRequest" }
            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["data"]?["accessory"]?["name"] == "Alice's AirPods")
            // Everything the bridge published is valid UTF-8.
            let own = ["/request/", "/telemetry/", "/set"] // what this test published itself
            for message in observer.messages.elements
            where message.topic.hasPrefix("aabridge/") && !message.payload.isEmpty && !own.contains(where: message.topic.contains) {
                #expect(String(validating: message.payload, as: UTF8.self) != nil, "\(message.topic)")
            }
        }
    }

    @Test("names with +, #, / and control characters never become topic levels")
    func topicInjection() async throws {
        let names = ["kitchen/+/#", "#", "+", "a/b/c", "../../bridge/state", "$SYS/x", "x\u{0}y"]
        try await withBridge { _, observer async throws in
            var accepted = 0
            for name in names {
                let members = #""id":"\#(Fixture.speaker)","name":"\#(JSONValue.string(name).serialized.dropFirst().dropLast())""#
                let response = try await observer.request("accessory/rename", members)
                if response["error"] == nil { accepted += 1 }
                // Either way the state object keeps the name as data, never as a topic.
            }
            #expect(accepted >= names.count - 1)
            try await observer.publish("aabridge/bridge/request/picker/show", #"{"transaction":"p"}"#)
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            await observer.waitFor("aabridge/bridge/picker") { $0["candidates"]?.arrayValue?.isEmpty == false }
            let paired = try await observer.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"evil/+/#""#)
            #expect(paired["error"] == nil)
            _ = try await observer.request("health")
            let known: [String] = [
                "aabridge/bridge/", "aabridge/accessory/\(Fixture.airPodsTopic)", "aabridge/accessory/\(Fixture.headphonesTopic)",
                "aabridge/accessory/\(Fixture.speakerTopic)", "aabridge/accessory/F1E2D3C4B5A6", "aabridge/source/",
            ]
            for message in observer.messages.elements where message.topic.hasPrefix("aabridge/") && !message.topic.contains("/request/") {
                #expect(!message.topic.contains("+") && !message.topic.contains("#"), "\(message.topic)")
                #expect(known.contains { message.topic.hasPrefix($0) }, "unexpected topic \(message.topic)")
                #expect(
                    !message.topic.contains("kitchen") && !message.topic.contains("evil") && !message.topic.contains(".."),
                    "a name became a topic level: \(message.topic)")
            }
        }
    }

    @Test("20,000 invented addresses and 1,000 invented gateways: picker candidates and gateways stay bounded")
    func inventedAddresses() async throws {
        try await withBridge { _, observer async throws in
            _ = try await observer.request("picker/show", #""timeout":600"#)
            var generator = SystemRandomNumberGenerator()
            for index in 0..<20_000 {
                let address = (0..<6).map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &generator)) }
                let gateway = "gw\(index % 1000)"
                let payload =
                    #"{"id":"\#(address.joined(separator: ":"))","manufacturerdata":"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":-60}"#
                observer.client.enqueue(topic: "home/\(gateway)/BTtoMQTT/\(address.joined())", payload: Array(payload.utf8))
                if index % 2000 == 1999 { try await Task.sleep(for: .milliseconds(20)) }
            }
            // In order behind the flood: once this is answered, every advertisement was handled.
            let health = try await observer.request("health", timeout: .seconds(60))
            #expect(health["data"] != nil)
            let picker = await observer.waitFor("aabridge/bridge/picker") { _ in true }
            let candidates = observer.json(on: "aabridge/bridge/picker").compactMap { $0["candidates"]?.arrayValue?.count }.max() ?? 0
            #expect(candidates <= 64, "picker candidates: \(candidates)")
            #expect(picker != nil)
            let gateways = await observer.waitFor("aabridge/bridge/gateways") { _ in true }
            let count =
                observer.json(on: "aabridge/bridge/gateways").compactMap {
                    $0.arrayValue?.reduce(0) { $0 + ($1["heard"]?.arrayValue?.count ?? 0) }
                }
                .max() ?? 0
            #expect(count <= 256 && gateways != nil, "gateways listed: \(count)")
            // Dismissing the picker drops every candidate: nothing about unknown addresses remains.
            _ = try await observer.request("picker/dismiss")
            let accessories = try await observer.request("health")
            #expect(accessories["data"]?["accessories"] == 3)
        }
    }
}
