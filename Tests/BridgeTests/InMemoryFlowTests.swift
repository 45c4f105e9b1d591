import Configuration
import Foundation
import JSON
import MQTT
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The runtime's flows against an in-memory connection: the same stages, storage and
/// payloads as the real-broker suites (which remain the reference), in milliseconds.
@Suite("Flows without a broker (in-memory connection)")
struct InMemoryFlowTests {
    /// Runs a runtime on an ``InMemoryConnection`` with the end-to-end configuration and a
    /// fresh database.
    /// - Parameter prepare: adjusts the runtime (or feeds its inbox) before it runs.
    static func withRuntime(
        prepare: (BridgeRuntime) -> Void = { _ in }, _ body: (InMemoryConnection) async throws -> Void
    ) async throws {
        try await InMemoryRuntime.withConfiguration { configuration, database in
            let connection = InMemoryConnection()
            let runtime = try BridgeRuntime(configuration: configuration, store: try AccessoryStore(path: database), connection: connection)
            prepare(runtime)
            try await InMemoryRuntime.run(runtime, on: connection) { try await body(connection) }
            #expect(connection.json(on: "aabridge/bridge/state").last == ["state": "offline"])
        }
    }

    @Test("subscriptions: requests, /set, and each gateway's telemetry and status topics, once each")
    func subscriptions() async throws {
        try await Self.withRuntime { connection in
            let filters = connection.subscriptions
            #expect(filters.contains("aabridge/bridge/request/#"))
            #expect(filters.contains("aabridge/accessory/+/set"))
            #expect(filters.contains("home/+/BTtoMQTT/#"))
            #expect(Set(filters).count == filters.count, "no filter twice: \(filters)")
        }
    }

    /// `bridge/accessories` is built from the states as published on each accessory's topic
    /// (not rebuilt from the engine, which also holds what sightings refresh between two
    /// publications: `rssi`, `last_seen`): after a sighting that publishes nothing, a rename
    /// and a removal it is exactly the latest retained state of every remaining accessory,
    /// sorted by id.
    @Test("bridge/accessories lists each accessory's state as last published on its topic, by id; a removed one leaves it")
    func accessoryListMirrorsPublishedStates() async throws {
        try await Self.withRuntime { connection in
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.speakerTopic)"
            let speakerState = "aabridge/accessory/\(Fixture.speakerTopic)"
            connection.deliver(telemetry, #"{"rssi":-70}"#)
            await connection.waitFor(speakerState) { $0["rssi"] == -70 }
            let published = connection.published.messages(on: speakerState).count
            connection.deliver(telemetry, #"{"rssi":-71}"#) // refreshes the engine's record only
            #expect(await connection.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Den AirPods""#)?["status"] == "ok")
            #expect(await connection.request("accessory/remove", #""id":"\#(Fixture.airPods)""#)?["status"] == "ok")
            let list = await connection.waitFor("aabridge/bridge/accessories") { list in
                !(list.arrayValue ?? []).contains { $0["id"] == .string(Fixture.airPods) }
            }
            #expect(connection.published.messages(on: speakerState).count == published, "the second sighting published no state")
            let entries = try #require(list?.arrayValue)
            let ids = entries.compactMap { $0["id"]?.stringValue }
            #expect(ids == ids.sorted(), "sorted by id: \(ids)")
            #expect(!ids.isEmpty)
            for entry in entries {
                let id = try #require(entry["id"]?.stringValue)
                let topic = "aabridge/accessory/\(id.replacingOccurrences(of: ":", with: ""))"
                #expect(connection.json(on: topic).last == entry, "the list's entry for \(id) is its last published state")
            }
            #expect(connection.published.messages(on: "aabridge/accessory/\(Fixture.airPodsTopic)").last?.payload.isEmpty == true)
        }
    }

    @Test("picker, a real advertisement, select: registered; worn with a source connected routes the source")
    func pairingToDecision() async throws {
        try await Self.withRuntime { connection in
            #expect(await connection.request("picker/show", #""products":["AirPods Pro"]"#)?["status"] == "ok")
            connection.deliver(Fixture.advertisementTopic, Fixture.advertisementPayload)
            await connection.waitFor("aabridge/bridge/picker") { ($0["candidates"]?.arrayValue?.count ?? 0) == 1 }
            let selected = await connection.request("picker/select", #""id":"\#(Fixture.advertisementID)","name":"Kitchen AirPods""#)
            #expect(selected?["data"]?["state"] == "authorized")
            let topic = "aabridge/accessory/F1E2D3C4B5A6"
            await connection.waitFor(topic) { $0["registration"] == "active" && $0["name"] == "Kitchen AirPods" }

            // The migrated AirPods (native telemetry): a source, then worn -> a route decision.
            let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
            connection.deliver(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            connection.deliver(telemetry, #"{"placement":"inEar"}"#)
            let decision = await connection.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/decision") { $0["action"] == "route" }
            #expect(decision?["source"] == .string(Fixture.phone))
            let route = await connection.waitFor("aabridge/source/\(Fixture.phoneTopic)/route") { $0["target"] == .string(Fixture.airPods) }
            #expect(route?["accessory_name"] == "Alice's AirPods")
        }
    }

    @Test("bad input: a request that is not JSON is answered invalidRequest; a retained request is ignored with a warning")
    func badInput() async throws {
        try await Self.withRuntime { connection in
            connection.deliver("aabridge/bridge/request/health", "not json")
            let response = await connection.waitFor("aabridge/bridge/response/health") { $0["status"] == "error" }
            #expect(response?["error"]?["code"] == "invalidRequest")
            connection.deliver("aabridge/bridge/request/picker/show", "{}", retain: true)
            let warning = await connection.waitFor("aabridge/bridge/log") { $0["level"] == "warning" }
            #expect(warning?["message"]?.stringValue?.contains("retained") == true)
            #expect(connection.json(on: "aabridge/bridge/response/picker/show").isEmpty)
        }
    }

    @Test("a full backlog drops what does not fit, counts it in telemetry_rejected and says so on bridge/log")
    func backlogDrops() async throws {
        try await Self.withRuntime(prepare: { runtime in
            // Fed before the loop runs: 5 wait, 195 do not fit.
            runtime.backlog = Backlog(limit: 5)
            let inbox = runtime.inbox
            for _ in 0..<200 {
                inbox.forward(MQTTMessage(topic: Fixture.advertisementTopic, payload: Array(Fixture.advertisementPayload.utf8)))
            }
        }) { connection in
            let health = await connection.request("health")
            #expect(health?["data"]?["telemetry_rejected"] == 195)
            let warning = await connection.waitFor("aabridge/bridge/log") { $0["level"] == "warning" }
            #expect(warning?["message"]?.stringValue?.contains("195 messages dropped") == true)
        }
    }
}
