import AccessoryKit
import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing

@testable import Bridge

/// Sightings refresh `rssi`, `gateway` and `last_seen` without a state change; the retained
/// accessory state is republished for them at most once per refresh interval.
@Suite("Accessory state refresh from sightings")
struct StateRefreshTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        let milliseconds = Mutex<Int64>(1_795_000_000_000)
        func now() -> Timestamp { Timestamp(milliseconds: milliseconds.withLock { $0 }) }
        func advance(by delta: Int64) { milliseconds.withLock { $0 += delta } }
    }

    @Test("a sighting republishes rssi/gateway/last_seen only after the refresh interval")
    func refreshInterval() async throws {
        let harness = try BridgeHarness(availabilityTimeoutSeconds: 3600)
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        let clock = ManualClock()
        try await harness.start(observer: observer, clock: clock.now)
        let stateTopic = "aabridge/accessory/\(Fixture.headphonesTopic)"
        let sighting = #"{"id":"\#(Fixture.headphones)","rssi":-61,"name":"Acme Studio"}"#
        // The first sighting makes it available (a change: published at once).
        try await observer.publish("home/hall/BTtoMQTT/\(Fixture.headphonesTopic)", sighting)
        _ = await observer.waitFor(stateTopic) { $0["available"] == true }
        let before = observer.messages(on: stateTopic).count

        // Inside the interval: the engine learns the RSSI, nothing is republished.
        try await observer.publish("home/hall/BTtoMQTT/\(Fixture.headphonesTopic)", sighting)
        let health = try await observer.request("health")
        #expect(health["status"] == "ok")
        #expect(observer.messages(on: stateTopic).count == before)

        // Still inside the interval, two thirds of the way: nothing is republished. (The
        // sighting also keeps the room: a room not heard for 30 s expires, which is a change
        // of its own that this test is not about.)
        clock.advance(by: Publisher.stateRefreshMilliseconds * 2 / 3)
        try await observer.publish("home/hall/BTtoMQTT/\(Fixture.headphonesTopic)", sighting)
        _ = try await observer.request("health")
        #expect(observer.messages(on: stateTopic).count == before)

        // After the interval: the next sighting republishes the state with what it brought.
        clock.advance(by: Publisher.stateRefreshMilliseconds / 3 + 1)
        try await observer.publish("home/hall/BTtoMQTT/\(Fixture.headphonesTopic)", sighting)
        let republished = await observer.messages.wait(timeout: .seconds(20)) { elements in
            elements.filter { $0.topic == stateTopic }.count >= before + 1
        }
        #expect(republished)
        let refreshed = observer.json(on: stateTopic).last
        #expect(refreshed?["rssi"] == -61 && refreshed?["gateway"] == "hall")
        #expect(observer.messages(on: stateTopic).count == before + 1)
        #expect(await harness.stop() == 0)
        await observer.disconnect()
    }
}
