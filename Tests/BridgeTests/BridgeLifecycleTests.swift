import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// The bridge's own topics, migration, and state across restarts of the bridge and the broker.
@Suite("Bridge lifecycle over MQTT")
struct BridgeLifecycleTests {
    static let retainedBridgeTopics = [
        "aabridge/bridge/state", "aabridge/bridge/info", "aabridge/bridge/health", "aabridge/bridge/accessories",
        "aabridge/bridge/gateways", "aabridge/bridge/picker",
    ]

    @Test("retained bridge topics after connect; info carries no secret; clean stop says offline and invalidated")
    func retainedTopicsWithoutSecrets() async throws {
        let password = "s3cret-Pa55-\(UUID().uuidString.prefix(6))"
        let broker = try MosquittoBroker(.init(users: ["bridge": password, "watcher": "watch"]))
        let harness = try BridgeHarness(broker: broker, mqttExtra: "  user: bridge\n  password: \(password)")
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: broker, user: "watcher", password: "watch")
        try await harness.start(observer: observer)

        // A subscriber arriving later gets every retained bridge topic, with the retain flag.
        let late = try await Observer(broker: broker, user: "watcher", password: "watch")
        let complete = await late.messages.wait(timeout: .seconds(20)) { elements in
            Self.retainedBridgeTopics.allSatisfy { topic in elements.contains { $0.topic == topic } }
                && [Fixture.airPodsTopic, Fixture.headphonesTopic, Fixture.speakerTopic].allSatisfy { id in
                    elements.contains { $0.topic == "aabridge/accessory/\(id)" }
                }
        }
        #expect(complete, "retained topics seen: \(Set(late.messages.elements.map(\.topic)).sorted())")
        for topic in Self.retainedBridgeTopics {
            #expect(late.messages(on: topic).first?.retain == true, "\(topic) is retained")
        }
        #expect(late.messages(on: "aabridge/bridge/state").last?.payloadString == #"{"state":"online"}"#)
        #expect(late.messages(on: "aabridge/bridge/state").last?.qos == .atLeastOnce, "bridge/state is QoS 1")

        let info = try #require(late.json(on: "aabridge/bridge/info").last)
        #expect(info["base_topic"] == "aabridge")
        #expect(info["session"] == "activated")
        #expect(info["products"] == ["AirPods Pro", "Acme Studio Headphones", "Acme Speaker"])
        #expect(info["accessories"] == 3)
        #expect(info["registered"] == 1, "the migrated AirPods are auto-registered")
        #expect(info["gateways"] == 4, "configured gateways")
        #expect(info["version"]?.stringValue?.isEmpty == false)
        guard case .object? = info["config"] else {
            Issue.record("info.config is not an object: \(info)")
            return
        }

        let health = try #require(late.json(on: "aabridge/bridge/health").last)
        for key in [
            "uptime_s", "rss_bytes", "messages_in", "messages_out", "telemetry_rejected", "decisions", "errors",
            "mqtt_reconnects", "accessories", "registered", "at",
        ] {
            #expect(health[key] != nil, "health has \(key)")
        }
        let accessories = try #require(late.json(on: "aabridge/bridge/accessories").last?.arrayValue)
        #expect(
            accessories.compactMap { $0["id"]?.stringValue } == [Fixture.airPods, Fixture.headphones, Fixture.speaker],
            "sorted by id")
        #expect(late.json(on: "aabridge/bridge/picker").last?["state"] == "idle")
        #expect(late.json(on: "aabridge/accessory/\(Fixture.airPodsTopic)/availability").isEmpty == false)

        #expect(await harness.stop() == 0)
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        await observer.waitFor("aabridge/bridge/event") { $0["type"] == "invalidated" && $0["raw"] == 11 }
        await observer.waitFor("aabridge/bridge/info") { $0["session"] == "invalidated" }
        #expect(observer.messages(on: "aabridge/bridge/state").last?.payloadString == #"{"state":"offline"}"#)

        // Nothing the bridge published, ever, contains the password.
        let everything = observer.messages.elements + late.messages.elements
        #expect(everything.count > 10)
        for message in everything {
            #expect(!message.payloadString.contains(password), "\(message.topic) leaks the password")
            #expect(!message.topic.contains(password))
        }
        await late.disconnect()
        await observer.disconnect()
    }

    @Test("migration: activated first, accessories authorized without a picker, one migrationComplete")
    func migration() async throws {
        try await withBridge { _, observer async throws in
            await observer.waitFor("aabridge/bridge/event") { $0["type"] == "migrationComplete" }
            let events = observer.json(on: "aabridge/bridge/event")
            let types = events.compactMap { $0["type"]?.stringValue }
            #expect(types.first == "activated")
            #expect(events.first?["raw"] == 10)
            #expect(events.first?["accessory"] == .null, "lifecycle events carry no accessory")
            #expect(types.filter { $0 == "migrationComplete" }.count == 1)
            let added = events.filter { $0["type"] == "accessoryAdded" }
            #expect(
                added.compactMap { $0["accessory"]?["id"]?.stringValue }.sorted()
                    == [Fixture.airPods, Fixture.headphones, Fixture.speaker])
            #expect(added.allSatisfy { $0["accessory"]?["state"] == "authorized" && $0["raw"] == 30 })
            let migrated = try #require(events.firstIndex { $0["type"] == "migrationComplete" })
            #expect(events[migrated]["raw"] == 20)
            #expect(events[migrated]["accessory"] == .null)
            #expect(types.lastIndex(of: "accessoryAdded").map { $0 < migrated } == true, "migrationComplete after the items")
            #expect(!types.contains("pickerDidPresent"), "no picker")

            let state = await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") { $0["registration"] == "active" }
            #expect(state?["state"] == "authorized")
            #expect(state?["name"] == "Alice's AirPods")
            #expect(state?["placement"] == "offHead", "auto-registration's initial placement")
            #expect(state?["capabilities"] == ["audioSwitching", "placement"])

            let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
            #expect(current["status"] == "ok")
            #expect(current["data"]?["accessory"]?["state"] == "authorized")
            #expect(current["data"]?["configuration"]?["placement"] == "offHead")
        }
    }

    @Test("restart on the same database: accessories and registrations back, retained state republished, no second migration")
    func restartKeepsState() async throws {
        let first = try BridgeHarness()
        defer { first.removeDirectory() }
        let observer = try await Observer(broker: first.broker)
        try await first.start(observer: observer)
        let registered = try await observer.request(
            "accessory/register",
            #""id":"\#(Fixture.headphones)","capabilities":["audioSwitching","placement"],"placement":"onHead","primary_source":"\#(Fixture.phone)""#
        )
        #expect(registered["status"] == "ok")
        #expect(try await observer.request("accessory/rename", #""id":"\#(Fixture.speaker)","name":"Den Speaker""#)["status"] == "ok")
        // A live route: the AirPods worn with the phone connected.
        let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
        try await observer.publish(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
        try await observer.publish(telemetry, #"{"placement":"inEar"}"#)
        await observer.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
        #expect(await first.stop() == 0)
        await observer.disconnect()

        // A fresh broker: whatever retained state it has must come from the restarted bridge.
        let second = try BridgeHarness(directory: first.directory)
        let watcher = try await Observer(broker: second.broker)
        try await second.start(observer: watcher)
        let state = await watcher.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)")
        #expect(state?["registration"] == "active")
        #expect(state?["placement"] == "onHead")
        #expect(state?["primary_source"] == .string(Fixture.phone))
        await watcher.waitFor("aabridge/accessory/\(Fixture.speakerTopic)") { $0["name"] == "Den Speaker" }
        let current = try await watcher.request("accessory/current", #""id":"\#(Fixture.headphones)""#)
        #expect(
            current["data"]?["configuration"] == [
                "capabilities": ["audioSwitching", "placement"], "placement": "onHead",
                "primary_source": .string(Fixture.phone), "secondary_source": nil,
            ])
        let info = await watcher.waitFor("aabridge/bridge/info")
        #expect(info?["registered"] == 2)
        #expect(info?["accessories"] == 3)
        let late = try await Observer(broker: second.broker)
        await late.waitFor("aabridge/accessory/\(Fixture.headphonesTopic)") { $0["registration"] == "active" }
        #expect(late.messages(on: "aabridge/accessory/\(Fixture.headphonesTopic)").first?.retain == true)
        #expect(!watcher.eventTypes.contains("migrationComplete"), "migration runs once: \(watcher.eventTypes)")
        #expect(watcher.eventTypes.first == "activated")
        // The source's route is published at the start (`fallback` until a gateway hears the
        // AirPods, DocumentedBehaviourTests has the details), and restored once they are heard.
        let route = await watcher.waitFor("aabridge/source/\(Fixture.phoneTopic)/route")
        #expect(route?["target"] == "fallback")
        #expect(route?["reason"] == "startup")
        try await watcher.publish("aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)", #"{"rssi":-60}"#)
        await watcher.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
        await watcher.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)") {
            $0["placement"] == "inEar" && $0["routes"] == [.string(Fixture.phone)]
        }
        #expect(await second.stop() == 0)
        await late.disconnect()
        await watcher.disconnect()
    }

    @Test("broker restart: the bridge reconnects and its retained topics are back on the fresh broker")
    func brokerRestart() async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        // The speaker heard (a gateway relays it), so the phone's audio can go to it.
        try await observer.publish("aabridge/telemetry/livingroom/\(Fixture.speakerTopic)", #"{"rssi":-60}"#)
        await observer.waitFor("aabridge/accessory/\(Fixture.speakerTopic)/availability") { $0["state"] == "online" }
        #expect(
            try await observer.request(
                "accessory/register",
                #""id":"\#(Fixture.speaker)","capabilities":["audioSwitching"],"primary_source":"\#(Fixture.phone)""#)["status"] == "ok")
        // The laptop was routed to the AirPods and released again: its route is `fallback`.
        let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
        try await observer.publish(telemetry, #"{"sources":["\#(Fixture.laptop)"]}"#)
        try await observer.publish(telemetry, #"{"placement":"inEar"}"#)
        await observer.waitFor("aabridge/source/665544332211/route") { $0["target"] == .string(Fixture.airPods) }
        try await observer.publish(telemetry, #"{"placement":"offHead"}"#)
        await observer.waitFor("aabridge/source/665544332211/route") { $0["target"] == "fallback" }
        await observer.disconnect()

        // persistence is off: the restarted broker has no retained message at all.
        harness.broker.stop()
        try harness.broker.start()
        let fresh = try await Observer(broker: harness.broker)
        let back = await fresh.messages.wait(timeout: .seconds(8)) { elements in
            (Self.retainedBridgeTopics + [
                "aabridge/accessory/\(Fixture.speakerTopic)", "aabridge/source/\(Fixture.phoneTopic)/route",
                "aabridge/source/665544332211/route",
            ]).allSatisfy { topic in
                elements.contains { $0.topic == topic }
            }
        }
        #expect(back, "topics back: \(Set(fresh.messages.elements.map(\.topic)).sorted())")
        #expect(fresh.messages(on: "aabridge/bridge/state").last?.payloadString == #"{"state":"online"}"#)
        #expect(fresh.json(on: "aabridge/accessory/\(Fixture.speakerTopic)").last?["registration"] == "active")
        #expect(fresh.json(on: "aabridge/accessory/\(Fixture.speakerTopic)").last?["primary_source"] == .string(Fixture.phone))
        #expect(fresh.json(on: "aabridge/source/\(Fixture.phoneTopic)/route").last?["target"] == .string(Fixture.speaker))
        #expect(fresh.json(on: "aabridge/source/665544332211/route").last?["target"] == "fallback", "a fallback route is state too")
        // And it still answers requests.
        let health = try await fresh.request("health")
        #expect(health["status"] == "ok")
        #expect((health["data"]?["mqtt_reconnects"]?.intValue ?? 0) >= 1)
        #expect(await harness.stop() == 0)
        await fresh.disconnect()
    }

    @Test("bridge/health is published every health.interval_s, retained, with growing counters")
    func periodicHealth() async throws {
        try await withBridge(healthIntervalSeconds: 1) { _, observer async throws in
            let initial = observer.messages(on: "aabridge/bridge/health").count
            try await observer.publish("aabridge/bridge/request/health", "{}")
            let periodic = await observer.messages.wait(timeout: .seconds(4)) { elements in
                elements.filter { $0.topic == "aabridge/bridge/health" }.count >= initial + 2
            }
            #expect(periodic, "two more health messages within ~2 s at interval_s 1")
            let last = try #require(observer.json(on: "aabridge/bridge/health").last)
            #expect((last["uptime_s"]?.intValue ?? 0) >= 1)
            #expect((last["messages_in"]?.intValue ?? 0) >= 1)
            #expect((last["rss_bytes"]?.intValue ?? 0) > 1_000_000)
        }
    }

    @Test("homeassistant/status online makes the bridge republish its retained state")
    func homeAssistantStatusRepublishes() async throws {
        let harness = try BridgeHarness(homeAssistant: true)
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        let states = observer.messages(on: "aabridge/bridge/state").count
        let accessories = observer.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)").count
        try await observer.publish("homeassistant/status", "online")
        let republished = await observer.messages.wait { elements in
            elements.filter { $0.topic == "aabridge/bridge/state" }.count > states
                && elements.filter { $0.topic == "aabridge/accessory/\(Fixture.airPodsTopic)" }.count > accessories
        }
        #expect(republished)
        // "offline" (Home Assistant stopping) does not.
        let after = observer.messages(on: "aabridge/bridge/state").count
        try await observer.publish("homeassistant/status", "offline")
        #expect(try await observer.request("health")["status"] == "ok")
        #expect(observer.messages(on: "aabridge/bridge/state").count == after)
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
