import Testing

@testable import AccessoryKit

/// identity.md, "Rooms": the best smoothed RSSI among gateways heard within 30 s, moved only by
/// 5 dB or by the room's own silence.
@Suite("RoomTracker: the accessory's room")
struct RoomTrackerTests {
    let start = Timestamp(milliseconds: 1_800_000_000_000)

    func at(_ milliseconds: Int64) -> Timestamp { start.advanced(byMilliseconds: milliseconds) }

    @Test func theConstantsAreTheContracts() {
        #expect(RoomTracker.hysteresisDecibels == 5)
        #expect(RoomTracker.windowMilliseconds == 30_000)
        #expect(RoomTracker.capacity == 16)
    }

    @Test func theFirstGatewayIsTheRoomAndRepeatingItIsNoChange() {
        var tracker = RoomTracker()
        #expect(tracker.room == nil)
        #expect(tracker.nextExpiry == nil)
        var moved = tracker.heard(gateway: "kitchen", rssi: -70, at: at(0))
        #expect(moved)
        #expect(tracker.room == "kitchen")
        #expect(tracker.nextExpiry == at(30_000))
        moved = tracker.heard(gateway: "kitchen", rssi: -60, at: at(1_000))
        #expect(!moved)
        #expect(tracker.nextExpiry == at(31_000), "the room's expiry follows its last hearing")
    }

    @Test("5 dB better takes the room, 4.9 dB does not")
    func hysteresisBoundary() {
        var below = RoomTracker()
        _ = below.heard(gateway: "kitchen", rssi: -60, at: at(0))
        // -56 first, then -53: -56 + 0.3 * 3 = -55.1, 4.9 dB better than -60.
        var moved = below.heard(gateway: "bedroom", rssi: -56, at: at(100))
        #expect(!moved)
        moved = below.heard(gateway: "bedroom", rssi: -53, at: at(200))
        #expect(!moved)
        #expect(below.room == "kitchen")

        var exactly = RoomTracker()
        _ = exactly.heard(gateway: "kitchen", rssi: -60, at: at(0))
        moved = exactly.heard(gateway: "bedroom", rssi: -55, at: at(100))
        #expect(moved)
        #expect(exactly.room == "bedroom")
    }

    @Test func theRoomStaysWhenItIsWorseByLessThanTheHysteresis() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -60, at: at(0))
        _ = tracker.heard(gateway: "bedroom", rssi: -50, at: at(100))
        #expect(tracker.room == "bedroom")
        // The kitchen's average climbs to just under -46, 4 dB better than the bedroom: no flapping back.
        for n in 0..<30 {
            let moved = tracker.heard(gateway: "kitchen", rssi: -46, at: at(200 + Int64(n) * 100))
            #expect(!moved)
        }
        #expect(tracker.room == "bedroom")
    }

    @Test func theRoomsOwnDeclineCanHandItOver() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        _ = tracker.heard(gateway: "hall", rssi: -54, at: at(100))
        // Only the kitchen is heard from now on, ever weaker: -50 -> -56 -> -60.2.
        var moved = tracker.heard(gateway: "kitchen", rssi: -70, at: at(200))
        #expect(!moved)
        #expect(tracker.room == "kitchen")
        moved = tracker.heard(gateway: "kitchen", rssi: -70, at: at(300))
        #expect(moved)
        #expect(tracker.room == "hall")
    }

    @Test("RSSI is smoothed: one strong advertisement does not move the room, a sustained one does")
    func smoothing() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -60, at: at(0))
        _ = tracker.heard(gateway: "bedroom", rssi: -80, at: at(100))
        // -80 + 0.3 * 40 = -68: a single -40 is not taken as is.
        var moved = tracker.heard(gateway: "bedroom", rssi: -40, at: at(200))
        #expect(!moved)
        #expect(tracker.room == "kitchen")
        // -68 -> -59.6 -> -53.72: 6.3 dB better on the third.
        moved = tracker.heard(gateway: "bedroom", rssi: -40, at: at(300))
        #expect(!moved)
        moved = tracker.heard(gateway: "bedroom", rssi: -40, at: at(400))
        #expect(moved)
        #expect(tracker.room == "bedroom")
    }

    @Test func theBestIsTheHighestSmoothedValueNotTheFirstOrTheLatest() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        _ = tracker.heard(gateway: "hall", rssi: -56, at: at(100))
        _ = tracker.heard(gateway: "bedroom", rssi: -54, at: at(200))
        _ = tracker.heard(gateway: "study", rssi: -58, at: at(300))
        #expect(tracker.room == "kitchen")
        // The kitchen declines to -60.2: the bedroom is 6.2 dB better, the hall (first heard)
        // 4.2 and the study (last heard) 2.2.
        _ = tracker.heard(gateway: "kitchen", rssi: -70, at: at(400))
        let moved = tracker.heard(gateway: "kitchen", rssi: -70, at: at(500))
        #expect(moved)
        #expect(tracker.room == "bedroom")
    }

    @Test func aSilentRoomExpiresAfter30sToTheBestRecentGateway() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        _ = tracker.heard(gateway: "hall", rssi: -70, at: at(10_000))
        _ = tracker.heard(gateway: "study", rssi: -60, at: at(15_000))
        _ = tracker.heard(gateway: "bedroom", rssi: -75, at: at(20_000))
        var moved = tracker.expire(at: at(29_999))
        #expect(!moved)
        #expect(tracker.room == "kitchen")
        moved = tracker.expire(at: at(30_000))
        #expect(moved)
        #expect(tracker.room == "study", "the strongest of those heard within the window")
        #expect(tracker.nextExpiry == at(45_000))
        moved = tracker.expire(at: at(30_000))
        #expect(!moved)
    }

    @Test func aGatewayHeardTooLongAgoIsNoFallback() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "hall", rssi: -40, at: at(0))
        _ = tracker.heard(gateway: "kitchen", rssi: -30, at: at(5_000))
        #expect(tracker.room == "kitchen")
        _ = tracker.heard(gateway: "study", rssi: -80, at: at(20_000))
        // At 35 s the kitchen expires; the hall (stronger) was last heard 35 s ago, the study 15 s.
        let moved = tracker.expire(at: at(35_000))
        #expect(moved)
        #expect(tracker.room == "study")
    }

    @Test func noRecentGatewayLeavesNoRoom() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        _ = tracker.heard(gateway: "hall", rssi: -70, at: at(1_000))
        var moved = tracker.expire(at: at(31_000))
        #expect(moved)
        #expect(tracker.room == nil)
        #expect(tracker.nextExpiry == nil)
        moved = tracker.expire(at: at(40_000))
        #expect(!moved)
        // The next hearing, however weak, is the room again.
        moved = tracker.heard(gateway: "hall", rssi: -95, at: at(41_000))
        #expect(moved)
        #expect(tracker.room == "hall")
    }

    @Test func aHearingAfterTheRoomWentSilentMovesItAtOnce() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        // No expire() ran, but the kitchen has been silent for 30 s: a weaker hall takes over.
        let moved = tracker.heard(gateway: "hall", rssi: -80, at: at(30_000))
        #expect(moved)
        #expect(tracker.room == "hall")
    }

    @Test func aStaleAverageStartsOverFromTheNextSample() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -60, at: at(0))
        _ = tracker.heard(gateway: "hall", rssi: -90, at: at(0))
        _ = tracker.heard(gateway: "kitchen", rssi: -60, at: at(31_000))
        // The hall's -90 is 31 s old: its -50 is taken as is (10 dB better), not averaged to -78.
        let moved = tracker.heard(gateway: "hall", rssi: -50, at: at(31_100))
        #expect(moved)
        #expect(tracker.room == "hall")
    }

    @Test("at most 16 gateways: the least recently heard goes, never the room")
    func bound() {
        var tracker = RoomTracker()
        _ = tracker.heard(gateway: "kitchen", rssi: -50, at: at(0))
        // g0 is heard weakly first, then 15 more: 17 gateways in all.
        for n in 0..<16 { _ = tracker.heard(gateway: "g\(n)", rssi: n == 0 ? -90 : -80, at: at(100 + Int64(n))) }
        #expect(tracker.hearings.count == 16)
        // The kitchen, the room, is the least recently heard but stays; g0 made way for g15.
        #expect(tracker.hearings.contains { $0.gateway == "kitchen" })
        #expect(tracker.hearings.contains { $0.gateway == "g15" })
        #expect(!tracker.hearings.contains { $0.gateway == "g0" })
        #expect(tracker.room == "kitchen")
        // g0 forgot its average: its next -40 is taken as is and beats the kitchen by 10 dB
        // (averaged with its old -90 it would be -75).
        let moved = tracker.heard(gateway: "g0", rssi: -40, at: at(300))
        #expect(moved)
        #expect(tracker.room == "g0")
        #expect(tracker.hearings.count == 16)
        #expect(!tracker.hearings.contains { $0.gateway == "g1" }, "the next least recently heard went")
    }
}
