import Configuration
import Foundation
import MQTT
import Storage
import TestSupport
import Testing

@testable import Bridge

/// Requests sent while the bridge is away from the broker: its persistent session keeps them
/// (with a clean session the broker drops them, and the requester never gets an answer).
@Suite("Requests across a reconnect")
struct RequestsAcrossReconnectTests {
    /// The bridge connects through a proxy; the test cuts it and keeps it out, sends a request
    /// to the broker meanwhile, then lets it back.
    /// Gateway telemetry (QoS 1) is published while the bridge is away too.
    /// - Returns: whether the request was answered within 10 s of the bridge's return, and
    ///   whether the telemetry reached it.
    static func requestWhileAway(sessionExpiry: Int?) async throws -> (answered: Bool, telemetryReplayed: Bool) {
        let broker = try MosquittoBroker()
        let proxy = try TCPProxy(to: broker.port)
        defer { proxy.stop() }
        let extra = sessionExpiry.map { "  session_expiry_s: \($0)" } ?? ""
        let harness = try BridgeHarness(broker: broker, server: "mqtt://127.0.0.1:\(proxy.port)", mqttExtra: extra)
        defer { harness.removeDirectory() }
        var answered = false
        var replayed = false
        try await harness.run { observer in
            proxy.refuseConnections(true)
            proxy.cut()
            // The broker publishes the bridge's will once the link is gone: it is away now.
            await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            try await observer.publish(
                "aabridge/bridge/request/accessory/current", #"{"id":"\#(Fixture.headphones)","transaction":"away"}"#)
            proxy.refuseConnections(false)
            await observer.waitFor("aabridge/bridge/state") { $0["state"] == "online" }
            answered = await observer.messages.wait(timeout: .seconds(10)) { messages in
                messages.contains { $0.topic == "aabridge/bridge/response/accessory/current" && $0.payloadString.contains(#""away""#) }
            }
            // Had the broker kept the telemetry, it came before the request: gw1 would be listed.
            replayed = observer.json(on: "aabridge/bridge/gateways").contains {
                AvailabilityFlowTests.gateway($0, "omg", heard: "gw1") != nil
            }
        }
        return (answered, replayed)
    }

    @Test("a request sent while the bridge reconnects is answered once it is back (the broker kept it); telemetry is not replayed")
    func answeredAfterReconnect() async throws {
        let outcome = try await Self.requestWhileAway(sessionExpiry: nil)
        #expect(outcome.answered, "the request waited in the bridge's session")
        #expect(!outcome.telemetryReplayed, "telemetry is subscribed at QoS 0: what was heard while away is not replayed as if heard now")
    }

    @Test("session_expiry_s: 0 is a clean session: the same request is lost, as documented")
    func cleanSessionLosesIt() async throws {
        #expect(try await !Self.requestWhileAway(sessionExpiry: 0).answered)
    }

    @Test("the bridge's client keeps requests, /set and statuses apart from telemetry (priorityFilters)")
    func prioritySubscriptions() throws {
        let harness = try BridgeHarness(homeAssistant: true)
        defer { harness.removeDirectory() }
        let store = try AccessoryStore(path: harness.databasePath)
        let runtime = try BridgeRuntime(configuration: harness.configuration, store: store)
        let client = try #require(runtime.connection as? MQTTClient)
        #expect(
            client.configuration.priorityFilters == [
                // The pairing and re-attach forms are requests in all but topic: "Pair" sends
                // picker/select, "Re-attach" accessory/reattach.
                "aabridge/bridge/request/#", "aabridge/accessory/+/set", "aabridge/bridge/pairing/set",
                "aabridge/bridge/reattach/set", "home/+/LWT",
                "espresense/rooms/+/status", "tele/+/LWT", "homeassistant/status",
            ], "telemetry filters (home/+/BTtoMQTT/#, ...) are not among them")
        // The bound counts what the runtime's reader reports taking; the commands' clients
        // (clientConfiguration alone) have readers that do not report, so they get none.
        #expect(client.configuration.messageBufferLimit == 100_000)
        let commandClient = try BridgeRuntime.clientConfiguration(harness.configuration, topics: Topics(base: "aabridge"))
        #expect(commandClient.messageBufferLimit == nil)
        #expect(commandClient.priorityFilters.isEmpty)
    }
}
