import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Home Assistant discovery as the running bridge publishes it on a real broker.
@Suite("Home Assistant discovery over MQTT")
struct HomeAssistantRuntimeTests {
    static let airPodsConfig = "homeassistant/device/aabridge_\(Fixture.airPodsTopic)/config"

    /// Runs a bridge with Home Assistant enabled and an observer of `aabridge/#` and `homeassistant/#`.
    func withHomeAssistantBridge(_ body: (BridgeHarness, Observer) async throws -> Void) async throws {
        try await withBridge(homeAssistant: true, subscribe: ["aabridge/#", "homeassistant/#"], body)
    }

    func discovery(_ observer: Observer, _ topic: String) -> [JSONValue] {
        observer.messages(on: topic).compactMap { $0.payload.isEmpty ? nil : try? JSONParser.parse($0.payload) }
    }

    @Test("on connect: one retained device config for the bridge and one per accessory")
    func publishedOnConnect() async throws {
        try await withHomeAssistantBridge { harness, observer in
            let config = await observer.waitFor(Self.airPodsConfig) { _ in true }
            let payload = try #require(config)
            // Retained: a subscriber arriving later still gets it.
            let late = try await Observer(broker: harness.broker, subscribe: ["homeassistant/#"])
            #expect(await late.waitFor(Self.airPodsConfig) { _ in true } != nil)
            #expect(late.messages(on: Self.airPodsConfig).allSatisfy { $0.retain })
            await late.disconnect()
            #expect(payload["device"]?["connections"] == [["bluetooth", .string(Fixture.airPods)]])
            #expect(payload["origin"]?["name"] != nil)
            #expect(payload["components"]?["placement"]?["platform"] == "sensor")
            let bridgeConfigs = observer.messages.elements.filter {
                $0.topic.hasPrefix("homeassistant/device/aabridge_bridge_") && $0.topic.hasSuffix("/config")
            }
            #expect(!bridgeConfigs.isEmpty, "the bridge device is announced too")
        }
    }

    @Test("a rename updates the device name; unique_ids stay; removal clears the config with an empty retained payload")
    func renameAndRemove() async throws {
        try await withHomeAssistantBridge { harness, observer in
            let first = try #require(await observer.waitFor(Self.airPodsConfig) { _ in true })
            let rename = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Kitchen pods""#)
            #expect(rename["status"] == "ok")
            let renamed = try #require(await observer.waitFor(Self.airPodsConfig) { $0["device"]?["name"] == "Kitchen pods" })
            let uniqueIDs = { (payload: JSONValue) -> [String] in
                guard case .object(let components)? = payload["components"] else { return [] }
                return components.compactMap { $0.1["unique_id"]?.stringValue }.sorted()
            }
            #expect(!uniqueIDs(first).isEmpty)
            #expect(uniqueIDs(renamed) == uniqueIDs(first), "unique_ids survive a rename")

            let remove = try await observer.request("accessory/remove", #""id":"\#(Fixture.airPods)""#)
            #expect(remove["status"] == "ok")
            let cleared = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.contains { $0.topic == Self.airPodsConfig && $0.payload.isEmpty }
            }
            #expect(cleared, "the removed accessory's discovery topic gets an empty payload")
            // ...retained, so the broker forgets the device: a late subscriber gets nothing for it.
            let late = try await Observer(broker: harness.broker, subscribe: ["homeassistant/#"])
            _ = await late.messages.wait(timeout: .seconds(1)) { $0.contains { $0.topic == Self.airPodsConfig } }
            #expect(late.messages(on: Self.airPodsConfig).isEmpty)
            await late.disconnect()
        }
    }

    @Test("Home Assistant's birth message makes the bridge republish discovery and state after a short delay, once for a burst")
    func birthMessage() async throws {
        try await withHomeAssistantBridge { _, observer in
            _ = try #require(await observer.waitFor(Self.airPodsConfig) { _ in true })
            // On a first start the migrated AirPods' discovery goes out twice (activation's
            // change, kept until connected, then everything): the response, posted after
            // both, says the start-up is over.
            _ = try await observer.request("health")
            let before = observer.messages(on: Self.airPodsConfig).count
            let stateBefore = observer.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)").count
            // A burst (a client repeating it, or hostile): one republish, not twenty. Posted
            // back to back, so all twenty reach the bridge before its 1-5 s delay ends.
            for _ in 0..<20 { observer.client.enqueue(topic: "homeassistant/status", payload: Array("online".utf8), qos: .atLeastOnce) }
            let republished = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.filter { $0.topic == Self.airPodsConfig }.count > before
            }
            #expect(republished)
            #expect(observer.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)").count > stateBefore, "state too")
            // Anything but "online" is not a birth message.
            let count = observer.messages(on: Self.airPodsConfig).count
            try await observer.publish("homeassistant/status", "offline")
            try await Task.sleep(for: .seconds(6))
            #expect(observer.messages(on: Self.airPodsConfig).count == count)
            #expect(count == before + 1, "one republish for the burst of 20 birth messages, got \(count - before)")
        }
    }
}
