import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// A retained request would be replayed after every reconnect and restart: the bridge refuses
/// what the broker delivers from its retained store (a live publish is never flagged retained
/// for a subscriber that was already there, so it is served once as usual).
@Suite("Retained requests")
struct RetainedRequestTests {
    @Test("a retained request met at (re)subscribe is ignored with a warning on bridge/log")
    func retainedIgnored() async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        // Left on the broker before the bridge starts, as a mistaken `mosquitto_pub -r` would.
        try await observer.publish(
            "aabridge/bridge/request/accessory/rename",
            #"{"id":"\#(Fixture.airPods)","name":"Replayed forever"}"#, retain: true)
        try await harness.start(observer: observer)
        let warned = await observer.waitFor("aabridge/bridge/log") {
            $0["message"]?.stringValue?.contains("retained message on aabridge/bridge/request/accessory/rename") == true
        }
        #expect(warned != nil)
        let current = try await observer.request("accessory/current", #""id":"\#(Fixture.airPods)""#)
        #expect(current["data"]?["accessory"]?["name"] == "Alice's AirPods", "the retained rename was not carried out")
        #expect(observer.messages(on: "aabridge/bridge/response/accessory/rename").isEmpty)
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
