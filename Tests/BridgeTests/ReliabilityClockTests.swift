import Foundation
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Wall-clock jumps while the bridge runs (time injected through BridgeRuntime's `clock:`).
/// The engine measures debounce and availability with the timestamps the runtime passes, so a
/// backward jump must not freeze them and a forward jump must not break them.
@Suite("Reliability: clock jumps")
struct ReliabilityClockTests {
    static let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
    static let decision = "aabridge/accessory/\(Fixture.airPodsTopic)/decision"
    static let availability = "aabridge/accessory/\(Fixture.airPodsTopic)/availability"
    static let hour: Int64 = 3_600_000

    @Test("debounce commits on time although the clock jumped back an hour while a placement was pending")
    func debounceAfterBackwardJump() async throws {
        try await withClockedBridge(debounceMilliseconds: 1000) { bridge, observer async throws in
            try await observer.publish(Self.telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            await observer.waitFor(Self.decision) { $0["action"] == "route" }

            // offHead is pending (seen, waiting out the 1 s window) when the clock goes back.
            try await observer.publish(Self.telemetry, #"{"placement":"offHead"}"#)
            _ = try await observer.request("health")
            #expect(!observer.json(on: Self.decision).contains { $0["action"] == "release" }, "released before the window")
            bridge.clock.jump(byMilliseconds: -Self.hour)
            let started = ContinuousClock.now
            let released = await observer.waitFor(Self.decision) { $0["action"] == "release" }
            #expect(released?["reason"] == "placement:offHead")
            #expect(ContinuousClock.now - started < .seconds(20), "the debounce waited for the clock to catch up")
        }
    }

    @Test("an accessory no longer heard still goes offline after the clock jumped back an hour")
    func availabilityAfterBackwardJump() async throws {
        try await withClockedBridge(availabilityTimeoutSeconds: 1) { bridge, observer async throws in
            try await observer.publish(Self.telemetry, #"{"rssi":-60}"#)
            _ = try await observer.request("health")
            await observer.waitFor(Self.availability) { $0["state"] == "online" }
            // (Before it was heard, the accessory was offline: only what follows `online` counts.)
            let heard = observer.json(on: Self.availability).count
            bridge.clock.jump(byMilliseconds: -Self.hour)
            let offline = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.filter { $0.topic == Self.availability }.dropFirst(heard).contains { $0.payloadString.contains("offline") }
            }
            #expect(offline)
            // Heard again after the jump: online, and offline again a second later.
            let mark = observer.json(on: Self.availability).count
            try await observer.publish(Self.telemetry, #"{"rssi":-61}"#)
            let cycled = await observer.messages.wait(timeout: .seconds(20)) { elements in
                let states = elements.filter { $0.topic == Self.availability }.dropFirst(mark).map(\.payloadString)
                guard let online = states.firstIndex(where: { $0.contains("online") }) else { return false }
                return states[online...].contains { $0.contains("offline") }
            }
            #expect(cycled, "online then offline again: \(observer.json(on: Self.availability).dropFirst(mark))")
        }
    }

    @Test("a forward jump of ten minutes: not-heard accessories go offline once, come back with telemetry, debounce still works")
    func forwardJump() async throws {
        try await withClockedBridge(debounceMilliseconds: 200, availabilityTimeoutSeconds: 120) { bridge, observer async throws in
            try await observer.publish(Self.telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            // Heard by the telemetry (offline before: nothing had heard it since the start); the
            // request, answered in order, proves the telemetry was handled before the clock moves.
            _ = try await observer.request("health")
            await observer.waitFor(Self.availability) { $0["state"] == "online" }
            let heard = observer.json(on: Self.availability).count
            bridge.clock.jump(byMilliseconds: 10 * 60_000)
            // Ten minutes (as far as the wall clock says) without a message: beyond the 120 s timeout.
            let wentOffline = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.filter { $0.topic == Self.availability }.dropFirst(heard).contains { $0.payloadString.contains("offline") }
            }
            #expect(wentOffline)
            try await observer.publish(Self.telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            let back = await observer.messages.wait(timeout: .seconds(20)) { elements in
                elements.filter { $0.topic == Self.availability }.last?.payloadString.contains("online") == true
            }
            #expect(back, "online again after telemetry")
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let routed = await observer.waitFor(Self.decision) { $0["action"] == "route" }
            #expect(routed?["source"] == .string(Fixture.phone))
            let offline = observer.json(on: Self.availability).dropFirst(heard).filter { $0["state"] == "offline" }.count
            #expect(
                offline == 1,
                "one offline per jump, no flapping: \(observer.messages(on: Self.availability).map(\.payloadString)) \(observer.messages.elements.count)"
            )
        }
    }

    @Test("published times follow the injected clock: a decision after a forward jump is stamped after it")
    func timestampsFollowClock() async throws {
        try await withClockedBridge { bridge, observer async throws in
            bridge.clock.jump(byMilliseconds: 365 * 24 * Self.hour)
            try await observer.publish(Self.telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
            try await observer.publish(Self.telemetry, #"{"placement":"inEar"}"#)
            let routed = await observer.waitFor(Self.decision) { $0["action"] == "route" }
            let year = Calendar(identifier: .gregorian).component(.year, from: Date())
            #expect(routed?["at"]?.stringValue?.hasPrefix("\(year + 1)") == true, "\(String(describing: routed?["at"]))")
        }
    }

    @Test("SteadyClock: a backward step is absorbed, a later forward step pays it back, time never decreases")
    func steadyClock() {
        let wall = JumpingClock()
        let steady = SteadyClock(wall.now)
        let start = steady.now()
        wall.jump(byMilliseconds: -Self.hour)
        let afterBack = steady.now()
        #expect(afterBack >= start)
        #expect(afterBack.milliseconds(since: start) < 1000, "continues from where it was")
        wall.jump(byMilliseconds: Self.hour)
        let afterForward = steady.now()
        // The hour absorbed is paid back: close to the wall clock again, not an hour ahead.
        #expect(abs(afterForward.milliseconds(since: wall.now())) < 1000)
        #expect(afterForward >= afterBack)
        wall.jump(byMilliseconds: 10 * 60_000)
        #expect(steady.now().milliseconds(since: afterForward) >= 10 * 60_000, "a forward step is taken as is")
    }
}
