import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// What mqtt-api.md promises, checked against a real mosquitto.
@Suite("The documented behaviour over MQTT")
struct DocumentedBehaviourTests {
    static let airPodsTelemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let headphonesTelemetry = "aabridge/telemetry/livingroom/\(Fixture.headphonesTopic)"
    static let route = "aabridge/source/\(Fixture.phoneTopic)/route"

    @Test("restart on the same database: offline and never seen until heard, placement and worn consistent, routes fallback")
    func restartPublishesNothingInvented() async throws {
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        let observer = try await Observer(broker: first.broker)
        try await first.start(observer: observer)
        try await observer.publish(Self.airPodsTelemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
        try await observer.publish(Self.airPodsTelemetry, #"{"placement":"inEar"}"#)
        await observer.waitFor(Self.route) { $0["target"] == .string(Fixture.airPods) }
        #expect(await first.stop() == 0)
        await observer.disconnect()

        let second = try BridgeHarness(directory: first.directory)
        let watcher = try await Observer(broker: second.broker)
        try await second.start(observer: watcher)
        let airPods = "aabridge/accessory/\(Fixture.airPodsTopic)"
        let state = await watcher.waitFor(airPods)
        #expect(state?["available"] == false)
        #expect(state?["last_seen"] == .null)
        #expect(state?["placement"] == "inEar")
        #expect(state?["worn"] == true)
        #expect(state?["routes"] == [])
        for topic in [Fixture.airPodsTopic, Fixture.headphonesTopic, Fixture.speakerTopic] {
            let availability = await watcher.waitFor("aabridge/accessory/\(topic)/availability")
            #expect(availability == ["state": "offline"], "\(topic)")
        }
        let route = await watcher.waitFor(Self.route)
        #expect(route?["target"] == "fallback")
        #expect(route?["reason"] == "startup")
        #expect(!watcher.json(on: airPods).contains { $0["available"] == true }, "never published available before heard")

        // Heard: available, seen, and the source routed again.
        try await watcher.publish(Self.airPodsTelemetry, #"{"rssi":-60}"#)
        await watcher.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/availability") { $0 == ["state": "online"] }
        let heard = await watcher.waitFor(airPods) { $0["available"] == true }
        #expect(heard?["last_seen"]?.stringValue?.hasSuffix("Z") == true)
        await watcher.waitFor(Self.route) { $0["target"] == .string(Fixture.airPods) }
        #expect(await second.stop() == 0)
        await watcher.disconnect()
    }

    @Test("decision reasons: registered, placement, other_accessory_released, preferred_source")
    func decisionReasons() async throws {
        try await withBridge { _, observer async throws in
            let airPodsDecision = "aabridge/accessory/\(Fixture.airPodsTopic)/decision"
            let headphonesDecision = "aabridge/accessory/\(Fixture.headphonesTopic)/decision"
            // The headphones heard, then registered worn with the phone: routed because registered.
            try await observer.publish(Self.headphonesTelemetry, #"{"rssi":-60}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["available"] == true }
            let registered = try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"],"placement":"onHead","primary_source":"\#(Fixture.phone)""#
            )
            #expect(registered["status"] == "ok")
            let first = await observer.waitFor(headphonesDecision) { $0["action"] == "route" }
            #expect(first?["reason"] == "registered")
            await observer.waitFor(Self.route) { $0["target"] == .string(Fixture.headphones) && $0["reason"] == "registered" }

            // The AirPods put on take the phone; taken off, the phone goes back to the headphones.
            try await observer.publish(Self.airPodsTelemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            try await observer.publish(Self.airPodsTelemetry, #"{"placement":"inEar"}"#)
            let routed = await observer.waitFor(airPodsDecision) { $0["action"] == "route" }
            #expect(routed?["reason"] == "placement:inEar")
            try await observer.publish(Self.airPodsTelemetry, #"{"placement":"offHead"}"#)
            let released = await observer.waitFor(airPodsDecision) { $0["action"] == "release" }
            #expect(released?["reason"] == "placement:offHead")
            let back = await observer.waitFor(headphonesDecision) { $0["action"] == "route" && $0["reason"] != "registered" }
            #expect(back?["reason"] == "other_accessory_released")
            #expect(back?["placement"] == "onHead")
            let route = await observer.waitFor(Self.route) { $0["target"] == .string(Fixture.headphones) && $0["reason"] != "registered" }
            #expect(route?["reason"] == "other_accessory_released")

            // Preferring a source the headphones were not connected to.
            try await observer.publish(
                "aabridge/accessory/\(Fixture.headphonesTopic)/set", #"{"preferred_source":"\#(Fixture.laptop)"}"#)
            let preferred = await observer.waitFor(headphonesDecision) { $0["source"] == .string(Fixture.laptop) }
            #expect(preferred?["action"] == "route")
            #expect(preferred?["reason"] == "preferred_source")
        }
    }

    @Test("invalid content in native telemetry and /set is logged as a warning on bridge/log, not only on the error topic")
    func contentErrorsAreLogged() async throws {
        try await withBridge { _, observer async throws in
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", #"{"placement":"sideways"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/error") { $0["code"] == "invalidRequest" }
            let fromSet = await observer.waitFor("aabridge/bridge/log") {
                $0["message"]?.stringValue?.contains("sideways") == true
            }
            #expect(fromSet?["level"] == "warning")
            #expect(fromSet?["message"]?.stringValue?.contains(Fixture.airPods) == true)

            try await observer.publish(Self.headphonesTelemetry, #"{"source_connected":"not-an-address"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)/error") { $0["code"] == "invalidRequest" }
            let fromTelemetry = await observer.waitFor("aabridge/bridge/log") {
                $0["message"]?.stringValue?.contains("not-an-address") == true
            }
            #expect(fromTelemetry?["level"] == "warning")
            #expect(fromTelemetry?["message"]?.stringValue?.contains("livingroom") == true)
            let health = try await observer.request("health")
            #expect(health["data"]?["telemetry_rejected"] == 2)
        }
    }

    @Test("a request for an unknown accessory is answered on the response topic only")
    func unknownAccessoryHasNoErrorTopic() async throws {
        try await withBridge { _, observer async throws in
            let unknown = "D0:C3:D2:A1:B2:C3"
            let current = try await observer.request("accessory/current", #""id":"\#(unknown)""#)
            #expect(current["error"]?["code"] == "invalidRequest")
            let register = try await observer.request("accessory/register", #""id":"\#(unknown)","capabilities":["audioSwitching"]"#)
            #expect(register["error"]?["code"] == "invalidRequest")
            // A known accessory's error still arrives after them: the unknown one got nothing.
            try await observer.publish("aabridge/accessory/\(Fixture.airPodsTopic)/set", #"{"placement":"sideways"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/error")
            #expect(observer.messages.elements.filter { $0.topic.hasPrefix("aabridge/accessory/D0C3D2A1B2C3") }.isEmpty)
            let health = try await observer.request("health")
            #expect(health["data"]?["errors"] == 3)
        }
    }

    @Test("/set ignores keys that are not update fields, `register` among them, as mqtt-api.md says")
    func setIgnoresUnknownKeys() async throws {
        try await withBridge { _, observer async throws in
            let set = "aabridge/accessory/\(Fixture.airPodsTopic)/set"
            try await observer.publish(set, #"{"register":true}"#)
            try await observer.publish(set, #"{"register":true,"placement":"inEar"}"#)
            await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["placement"] == "inEar" }
            #expect(observer.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)/error").isEmpty)
            // A registration (capabilities) through /set is refused.
            try await observer.publish(set, #"{"capabilities":["audioSwitching"]}"#)
            let refused = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/error")
            #expect(refused?["operation"] == "register")
        }
        let documentation = try String(contentsOf: Repository.root.appendingPathComponent("docs/mqtt-api.md"), encoding: .utf8)
        #expect(documentation.contains("`{\"register\":true}`"), "mqtt-api.md says what /set does with a `register` key")
    }

    @Test("first start: bridge/state online first, then each retained topic exactly once")
    func firstStartPublishesEachTopicOnce() async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"]) { _, observer async throws in
            // Let the first wakes (the accessory list, deferred commits) pass.
            try await Task.sleep(for: .milliseconds(800))
            let messages = observer.messages.elements
            #expect(messages.first?.topic == "aabridge/bridge/state", "\(messages.prefix(3).map(\.topic))")
            var counts: [String: Int] = [:]
            for message in messages where message.retain || !message.topic.hasSuffix("/event") {
                counts[message.topic, default: 0] += 1
            }
            let repeated = counts.filter { $0.value > 1 }
            #expect(repeated.isEmpty, "published more than once: \(repeated)")
            for topic in [
                "aabridge/bridge/state", "aabridge/bridge/info", "aabridge/accessory/\(Fixture.airPodsTopic)",
                "aabridge/accessory/\(Fixture.airPodsTopic)/availability", "homeassistant/device/aabridge_\(Fixture.airPodsTopic)/config",
            ] {
                #expect(counts[topic] == 1, "\(topic)")
            }
            let events = observer.eventTypes
            #expect(events.first == "activated")
            #expect(events.filter { $0 == "accessoryAdded" }.count == 3)
        }
    }
}
