import Testing

@testable import AccessoryKit

@Suite("Placement filter")
struct PlacementFilterTests {
    let t0 = Timestamp(milliseconds: 10_000)
    func at(_ ms: Int64) -> Timestamp { t0.advanced(byMilliseconds: ms) }

    @Test func defaultWindowIs500ms() {
        #expect(PlacementFilter().debounceMilliseconds == 500)
        #expect(SwitchingSettings().placementDebounceMilliseconds == 500)
    }

    @Test func commitsOnlyAfterTheWindow() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        #expect(filter.observe(.inEar, at: at(0)) == nil)
        #expect(filter.tick(at: at(499)) == nil)
        #expect(filter.committed == .offHead)
        #expect(filter.deadline == at(500))
        #expect(filter.tick(at: at(500)) == .inEar)
        #expect(filter.committed == .inEar)
        #expect(filter.tick(at: at(900)) == nil)
    }

    @Test func repeatedRawReadingDoesNotRestartTheWindow() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        _ = filter.observe(.inEar, at: at(0))
        #expect(filter.observe(.inEar, at: at(300)) == nil)
        #expect(filter.observe(.inEar, at: at(500)) == .inEar)
    }

    @Test func changeBackCancelsThePendingChange() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        _ = filter.observe(.inEar, at: at(0))
        #expect(filter.observe(.offHead, at: at(200)) == nil)
        #expect(filter.pending == nil)
        #expect(filter.tick(at: at(1_000)) == nil)
        #expect(filter.committed == .offHead)
    }

    @Test func flapInsideTheWindowRestartsFromTheLastChange() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        _ = filter.observe(.inEar, at: at(0))
        _ = filter.observe(.offHead, at: at(100))
        _ = filter.observe(.inEar, at: at(200))
        #expect(filter.tick(at: at(600)) == nil)
        #expect(filter.tick(at: at(700)) == .inEar)
    }

    @Test func aDifferentPendingPlacementReplacesTheOld() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        _ = filter.observe(.inEar, at: at(0))
        _ = filter.observe(.onHead, at: at(300))
        #expect(filter.tick(at: at(500)) == nil)
        #expect(filter.tick(at: at(800)) == .onHead)
    }

    @Test func zeroWindowIsImmediate() {
        var filter = PlacementFilter(debounceMilliseconds: 0, committed: .offHead)
        #expect(filter.observe(.inEar, at: at(0)) == .inEar)
        #expect(filter.observe(.offHead, at: at(0)) == .offHead)
    }

    @Test func unchangedPlacementIsNeverAnUpdate() {
        var filter = PlacementFilter(debounceMilliseconds: 0, committed: .inEar)
        #expect(filter.observe(.inEar, at: at(0)) == nil)
        var slow = PlacementFilter(debounceMilliseconds: 500, committed: .inEar)
        #expect(slow.observe(.inEar, at: at(0)) == nil)
        #expect(slow.tick(at: at(10_000)) == nil)
    }

    @Test func revertRestoresThePlacementBeforeAFailedUpdate() {
        var filter = PlacementFilter(debounceMilliseconds: 0, committed: .offHead)
        #expect(filter.observe(.inEar, at: at(0)) == .inEar)
        filter.revert(to: .offHead)
        #expect(filter.committed == .offHead)
        #expect(filter.pending == nil)
        // The same reading is offered again: it is a change again, not silently swallowed.
        #expect(filter.observe(.inEar, at: at(1)) == .inEar)
    }
}
