import AccessoryKit
import Foundation
import MQTT
import Storage
import TestSupport
import Testing

@testable import Bridge

/// Registration changes caused by telemetry are committed together at the next tick, not
/// one transaction (one fsync) per message; requests still commit before they answer.
@Suite("Storage: telemetry writes committed together")
struct DeferredWritesTests {
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let state = "aabridge/accessory/\(Fixture.airPodsTopic)"

    @Test("200 placement changes: published one by one, stored in a few transactions, the latest on disk after a stop")
    func batched() async throws {
        let harness = try BridgeHarness()
        defer { harness.removeDirectory() }
        let observer = try await Observer(broker: harness.broker)
        try await harness.start(observer: observer)
        let store = try #require(harness.runner.store)
        _ = try await observer.request("health")
        let before = store.committedTransactions
        let states = observer.messages(on: Self.state).count

        let changes = 200
        for index in 0..<changes {
            let placement = index % 2 == 0 ? "offHead" : "inEar" // the last one: inEar
            observer.client.enqueue(topic: Self.telemetry, payload: Array(#"{"placement":"\#(placement)"}"#.utf8), qos: .atLeastOnce)
        }
        _ = try await observer.request("health") // answered after every change was handled
        let published = await observer.messages.wait(timeout: .seconds(20)) { elements in
            elements.filter { $0.topic == Self.state }.count >= states + changes
        }
        #expect(published, "each change published at once: \(observer.messages(on: Self.state).count - states) of \(changes)")
        // Deferred writes are committed within RuntimeCore.deferredCommitMilliseconds.
        _ = await eventually { store.committedTransactions > before }
        let transactions = store.committedTransactions - before
        #expect(
            transactions >= 1 && transactions < changes / 2,
            "\(transactions) transactions for \(changes) placement changes (one each without batching)")

        #expect(await harness.stop() == 0)
        await observer.disconnect()
        let reopened = try AccessoryStore(path: harness.databasePath)
        let id = try #require(BluetoothAddress(Fixture.airPods))
        let registration = try reopened.load().registrations[id]
        #expect(registration?.configuration.devicePlacement == .inEar, "the last change is stored")
        reopened.close()
    }

    @Test("a request after telemetry: the telemetry's change is stored before the request's, and the request is stored when answered")
    func requestAfterTelemetry() async throws {
        try await withBridge { harness, observer async throws in
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let renamed = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Kept""#)
            #expect(renamed["status"] == "ok")
            // Read while the bridge runs (no stop, so no shutdown flush): both are on disk.
            let reader = try AccessoryStore(path: harness.databasePath, mode: .readOnly)
            let restored = try reader.load()
            let id = try #require(BluetoothAddress(Fixture.airPods))
            #expect(restored.accessories.first { $0.id == id }?.displayName == "Kept")
            #expect(restored.registrations[id]?.configuration.devicePlacement == .inEar)
            reader.close()
        }
    }
}
