import Testing

@testable import AccessoryKit

/// The engine's side of identity.md's "Rooms": which sightings feed the room, that a change is
/// published in the same step, and that a silent room expires through `tick`.
@Suite("Engine: the accessory's room")
struct EngineRoomTests {
    let a = Fixtures.address(1), b = Fixtures.address(2)
    let buds = Fixtures.buds

    /// A paired accessory, with the clock at the pairing.
    func paired() -> Harness {
        var harness = Harness()
        harness.pair(a, buds)
        return harness
    }

    func changes(_ step: EngineStep, of id: BluetoothAddress) -> [AccessoryStatus] {
        step.outputs.compactMap { if case .accessoryChanged(let status) = $0, status.accessory.id == id { status } else { nil } }
    }

    @discardableResult
    func sight(
        _ harness: inout Harness, _ id: BluetoothAddress, _ gateway: String, _ rssi: Int, measured: Bool = true
    ) -> EngineStep {
        var sighting = Fixtures.sighting(id, for: buds, rssi: rssi, gateway: gateway)
        sighting.rssiMeasured = measured
        return harness.send(.sighting(sighting))
    }

    @Test func theFirstMeasuredSightingSetsTheRoomInTheStatus() {
        var harness = paired()
        #expect(harness.engine.status(of: a)?.room == nil)
        let step = sight(&harness, a, "kitchen", -60)
        #expect(changes(step, of: a).map(\.room) == ["kitchen"])
        #expect(harness.engine.status(of: a)?.room == "kitchen")
        #expect(harness.engine.statuses.first { $0.accessory.id == a }?.room == "kitchen")
    }

    @Test func aChangeOfRoomIsPublishedInTheSameStepAndOnlyThen() {
        var harness = paired()
        sight(&harness, a, "kitchen", -60)
        // Another gateway hearing it about as well is no change: nothing to publish.
        #expect(changes(sight(&harness, a, "bedroom", -57), of: a).isEmpty)
        #expect(harness.engine.status(of: a)?.gateway == "bedroom")
        #expect(harness.engine.status(of: a)?.room == "kitchen")
        // Clearly stronger (-57 -> -48.6 smoothed, 11.4 dB better): published at once.
        let step = sight(&harness, a, "bedroom", -29)
        #expect(changes(step, of: a).map(\.room) == ["bedroom"])
        #expect(harness.engine.status(of: a)?.room == "bedroom")
    }

    @Test func sightingsWithoutAMeasuredRSSIDoNotCount() {
        var harness = paired()
        sight(&harness, a, "kitchen", -60)
        // Even a strong value does not count when the gateway did not measure it.
        let step = sight(&harness, a, "bedroom", -20, measured: false)
        #expect(changes(step, of: a).isEmpty)
        #expect(harness.engine.status(of: a)?.room == "kitchen")
        #expect(harness.engine.status(of: a)?.gateway == "bedroom", "it still counts as heard")
        // Nor does it start a room.
        var fresh = paired()
        sight(&fresh, a, "hall", -30, measured: false)
        #expect(fresh.engine.status(of: a)?.room == nil)
        #expect(fresh.engine.records[a]?.room.nextExpiry == nil)
    }

    @Test("reports do not move the room: neither a /set rssi nor native telemetry's (rooms come from advertisements)")
    func reports() {
        var harness = paired()
        sight(&harness, a, "kitchen", -60)
        #expect(changes(harness.report(a, .rssi(-20), gateway: nil), of: a).isEmpty)
        #expect(harness.engine.status(of: a)?.room == "kitchen")
        harness.report(a, .rssi(-40), gateway: "study")
        #expect(harness.engine.status(of: a)?.room == "kitchen")
        // A report without an rssi proves the gateway heard it, not how well.
        var other = paired()
        other.report(a, .battery(Battery(main: 50)), gateway: "hall")
        #expect(other.engine.status(of: a)?.room == nil)
    }

    @Test("a silent room expires through tick at its deadline, to the best recent gateway and then to none")
    func expiryThroughTick() {
        var harness = paired()
        let start = harness.now
        sight(&harness, a, "kitchen", -50)
        // Availability expires at 120 s: the room's 30 s is the earliest work.
        #expect(harness.engine.nextDeadline == start.advanced(byMilliseconds: 30_000))
        harness.now = start.advanced(byMilliseconds: 10_000)
        sight(&harness, a, "hall", -70)
        #expect(harness.engine.status(of: a)?.room == "kitchen")

        #expect(changes(harness.advance(19_999), of: a).isEmpty)
        let moved = harness.advance(1)
        #expect(changes(moved, of: a).map(\.room) == ["hall"])
        #expect(harness.engine.nextDeadline == start.advanced(byMilliseconds: 40_000))

        let gone = harness.advance(10_000)
        #expect(changes(gone, of: a).map(\.room) == [nil])
        #expect(harness.engine.status(of: a)?.available == true, "still available: only the room expired")
        #expect(harness.engine.status(of: a)?.room == nil)
        #expect(harness.engine.roomCheckAt == nil)
        #expect(harness.engine.nextDeadline == harness.engine.availabilityCheckAt)

        // Heard again: a room, and a deadline for it.
        sight(&harness, a, "hall", -70)
        #expect(harness.engine.status(of: a)?.room == "hall")
        #expect(harness.engine.nextDeadline == harness.now.advanced(byMilliseconds: 30_000))
    }

    @Test func aRoomHeardAgainDoesNotExpireAndTheCheckFollowsTheEarliestRoom() {
        var harness = paired()
        harness.pair(b, buds)
        let start = harness.now
        sight(&harness, a, "kitchen", -50)
        harness.now = start.advanced(byMilliseconds: 10_000)
        sight(&harness, b, "hall", -50)
        harness.now = start.advanced(byMilliseconds: 20_000)
        sight(&harness, a, "kitchen", -50)
        // The check at 30 s finds nothing due (a was heard at 20 s) and moves to b's 40 s.
        #expect(harness.engine.nextDeadline == start.advanced(byMilliseconds: 30_000))
        #expect(changes(harness.advance(10_000), of: a).isEmpty)
        #expect(harness.engine.nextDeadline == start.advanced(byMilliseconds: 40_000))
        // Between checks a tick does not scan: the check time stays.
        harness.advance(5_000)
        #expect(harness.engine.roomCheckAt == start.advanced(byMilliseconds: 40_000))
        let second = harness.advance(5_000)
        #expect(changes(second, of: b).map(\.room) == [nil])
        #expect(changes(second, of: a).isEmpty)
        #expect(harness.engine.nextDeadline == start.advanced(byMilliseconds: 50_000))
        #expect(changes(harness.advance(10_000), of: a).map(\.room) == [nil])
    }

    @Test("while unavailable the room is null, and it starts over when the accessory is heard again")
    func unavailable() {
        let configuration = EngineConfiguration(
            products: [buds], declaration: Fixtures.declaration,
            switching: SwitchingSettings(placementDebounceMilliseconds: 0, availabilityTimeoutSeconds: 10, immediateRSSI: -50))
        var harness = Harness(configuration)
        harness.pair(a, buds)
        sight(&harness, a, "kitchen", -50)
        let expired = harness.advance(10_001)
        #expect(changes(expired, of: a).last?.available == false)
        #expect(changes(expired, of: a).last?.room == nil)
        #expect(harness.engine.status(of: a)?.room == nil)
        // The kitchen's -50 is 10 s old, within the window, but forgotten: a weak hall is the room.
        sight(&harness, a, "hall", -90)
        #expect(harness.engine.status(of: a)?.available == true)
        #expect(harness.engine.status(of: a)?.room == "hall")
    }

    @Test func aRemovedAccessoryHasNoStatusAndItsRoomCheckIsHarmless() {
        var harness = paired()
        sight(&harness, a, "kitchen", -50)
        harness.request(.remove(a))
        #expect(harness.engine.status(of: a) == nil)
        let step = harness.advance(30_000)
        #expect(changes(step, of: a).isEmpty)
        #expect(harness.engine.roomCheckAt == nil)
    }

    /// A sighting of `a` that advertises proximity pairing (only those leave a trace).
    func sightProfiled(_ harness: inout Harness, _ gateway: String, _ rssi: Int) {
        var sighting = Fixtures.sighting(a, for: buds, rssi: rssi, gateway: gateway)
        sighting.profile = ProximityProfile(model: 0x2014, colour: 1)
        harness.send(.sighting(sighting))
    }

    @Test("the trace keeps the room the accessory stayed in: a strong gateway in its last moments is not continuity")
    func theTraceKeepsTheRoomItStayedIn() {
        var harness = paired()
        for _ in 0..<90 {
            sightProfiled(&harness, "bedroom", -55)
            harness.advance(1_000)
        }
        #expect(harness.engine.trace(of: a).room == "bedroom")
        // Four frames at a signal it never had, just before silence (a forged or relayed frame).
        for _ in 0..<4 {
            sightProfiled(&harness, "kitchen", -20)
            harness.advance(500)
        }
        #expect(harness.engine.status(of: a)?.room == "kitchen", "the live room follows the signal")
        #expect(harness.engine.trace(of: a).room == "bedroom", "what re-attaching trusts does not")
        // Staying a minute in the kitchen is a move.
        for _ in 0..<61 {
            sightProfiled(&harness, "kitchen", -50)
            harness.advance(1_000)
        }
        #expect(harness.engine.trace(of: a).room == "kitchen")
    }

    @Test("the first room counts for the trace until one is kept")
    func theFirstRoomCountsUntilOneIsKept() {
        var harness = paired()
        sightProfiled(&harness, "hall", -60)
        #expect(harness.engine.trace(of: a).room == "hall")
    }
}
