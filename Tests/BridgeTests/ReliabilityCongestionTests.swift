import AccessoryKit
import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// A broker that does not keep up with the bridge's own publications (the chaos flood's
/// failure: 60,000 publications queued in libmosquitto, responses waiting 10 s behind them).
/// The broker is frozen with SIGSTOP so that "behind" is exact; telemetry is then fed to the
/// runtime's entrance (``RuntimeInbox``, where the MQTT forwarder puts it) because a frozen
/// broker delivers nothing.
@Suite("Reliability: a broker behind on acknowledgements")
struct ReliabilityCongestionTests {
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let state = "aabridge/accessory/\(Fixture.airPodsTopic)"

    @Test(
        "past the bound telemetry is shed and counted, requests are still answered, and telemetry is processed again once the broker catches up"
    )
    func shedsWhileBrokerIsBehind() async throws {
        // Base 0: the bound is four publications per accessory (3 accessories: 12).
        try await withBridge(prepare: { $0.congestion.base = 0 }) { harness, observer async throws in
            let limit = 4 * harness.configuration.accessories.count
            let client = try #require(harness.runner.client)
            let inbox = try #require(harness.runner.inbox)
            #expect(await eventually { client.outstandingPublishes == 0 }, "the start-up publications are acknowledged")
            let before = try await observer.request("health")["data"]?["telemetry_rejected"]?.intValue ?? -1

            // A gateway the bridge has heard, whose will comes during the congestion.
            try await observer.publish("home/gw9/BTtoMQTT/F1E2D3C4B5A6", Fixture.advertisementPayload)
            let heard = await observer.waitFor("aabridge/bridge/gateways") { list in
                list.arrayValue?.contains { $0["heard"]?.arrayValue?.contains { $0["name"] == "gw9" } == true } == true
            }
            #expect(heard != nil)
            #expect(await eventually { client.outstandingPublishes == 0 })

            harness.broker.freeze()
            let sent = 60
            for index in 0..<sent {
                let placement = index % 2 == 0 ? "inEar" : "offHead"
                inbox.forward(MQTTMessage(topic: Self.telemetry, payload: Array(#"{"placement":"\#(placement)"}"#.utf8)))
            }
            // One-off messages amid the flood are never shed: a source connected through
            // `/set` (said once) and a gateway's will saying it went offline (said once).
            inbox.forward(
                MQTTMessage(
                    topic: "aabridge/accessory/\(Fixture.airPodsTopic)/set",
                    payload: Array(#"{"source_connected":"\#(Fixture.phone)"}"#.utf8)))
            inbox.forward(MQTTMessage(topic: "home/gw9/LWT", payload: Array("offline".utf8)))
            let updates = 0
            inbox.forward(MQTTMessage(topic: "aabridge/bridge/request/health", payload: Array(#"{"transaction":"frozen"}"#.utf8)))
            // Each processed placement publishes the accessory's state; nothing is acknowledged.
            #expect(await eventually { client.outstandingPublishes > limit })
            try await Task.sleep(for: .milliseconds(300))
            let queued = client.outstandingPublishes
            #expect(queued <= limit + 8, "the bridge stopped publishing for telemetry at the bound (\(queued) queued, bound \(limit))")
            harness.broker.thaw()

            // The request made while the broker was frozen is answered, after the shed telemetry.
            let response = await observer.waitFor("aabridge/bridge/response/health") { $0["transaction"] == "frozen" }
            let rejected = (response?["data"]?["telemetry_rejected"]?.intValue ?? -1) - before
            #expect(
                rejected >= sent + updates - limit - 1 && rejected <= sent + updates,
                "telemetry shed while \(limit)+ publications waited: \(rejected) of \(sent + updates) counted as rejected")

            // The one-off messages were handled, not shed.
            let connected = await observer.waitFor(Self.state) { $0["primary_source"] == .string(Fixture.phone) }
            #expect(connected != nil, "the /set source_connected sent during the congestion was applied")
            let offline = await observer.waitFor("aabridge/bridge/gateways") { list in
                list.arrayValue?.contains { entry in
                    entry["heard"]?.arrayValue?.contains { $0["name"] == "gw9" && $0["state"] == "offline" } == true
                } == true
            }
            #expect(offline != nil, "the gateway's offline, sent during the congestion, was applied")

            // Caught up: telemetry changes state again.
            #expect(await eventually { client.outstandingPublishes == 0 })
            _ = try await observer.request("health")
            let current = observer.json(on: Self.state).last?["placement"]?.stringValue
            let next = current == "inEar" ? "offHead" : "inEar"
            try await observer.publish(Self.telemetry, #"{"placement":"\#(next)"}"#)
            let changed = await observer.waitFor(Self.state) { $0["placement"]?.stringValue == next }
            #expect(changed != nil, "placement \(next) published after the broker caught up (was \(current ?? "nil"))")
        }
    }
}
