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

    /// Issue 49, finding 2: an accessory's real in-case frames at 1 Hz and replayed ones saying
    /// in ear at 1 Hz, half a second apart, made placement flip about once a second (29 of 57
    /// states in ear). Contradicting readings lengthen the window, so a minute of it commits a
    /// handful of times, not dozens.
    @Test func contradictingSourcesCannotMakeItFlap() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        var commits = 0
        // Every half second: the engine's tick at the deadline, then the next frame.
        for step in Int64(0)..<120 {
            let now = at(step * 500)
            if filter.tick(at: now) != nil { commits += 1 }
            if filter.observe(step % 2 == 0 ? .offHead : .inEar, at: now) != nil { commits += 1 }
        }
        // Without the lengthened window: a commit every half second (118 in the minute).
        #expect(commits <= 3)
        #expect(filter.isContested)
        #expect(filter.windowMilliseconds == PlacementFilter.longestWindowMilliseconds)
    }

    /// The order CI met (issue 49's replay-flapping scenario): at each half second the engine's
    /// tick and the next frame come in either order, so some pending changes are cancelled and
    /// some commit a second or more after the last. Every order is bounded.
    @Test func contradictingSourcesCannotMakeItFlapInAnyOrder() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        var commits = 0
        var seed: UInt64 = 49
        for step in Int64(0)..<240 {
            let now = at(step * 500)
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let tickFirst = seed >> 63 == 1
            let reading: AccessoryControlDevice.Placement = step % 2 == 0 ? .offHead : .inEar
            if tickFirst, filter.tick(at: now) != nil { commits += 1 }
            if filter.observe(reading, at: now) != nil { commits += 1 }
            if !tickFirst, filter.tick(at: now) != nil { commits += 1 }
        }
        #expect(commits <= 6, "two minutes of 1 Hz against 1 Hz")
        #expect(filter.windowMilliseconds == PlacementFilter.longestWindowMilliseconds)
    }

    @Test func aQuietSpellBringsTheDebounceBack() {
        var filter = PlacementFilter(debounceMilliseconds: 500, committed: .offHead)
        // A wobble: only restarts the window.
        _ = filter.observe(.inEar, at: at(0))
        _ = filter.observe(.offHead, at: at(100))
        #expect(!filter.isContested)
        // Then a change reversed half a second after it committed: the second contradiction.
        _ = filter.observe(.inEar, at: at(200))
        #expect(filter.tick(at: at(700)) == .inEar)
        _ = filter.observe(.offHead, at: at(700))
        #expect(filter.tick(at: at(1_200)) == .offHead)
        #expect(filter.windowMilliseconds == PlacementFilter.contestedMinimumMilliseconds)
        // Within the contested window a change needs the longer hold.
        _ = filter.observe(.inEar, at: at(1_300))
        #expect(filter.tick(at: at(1_800)) == nil)
        #expect(filter.tick(at: at(2_300)) == .inEar)
        // After a quiet spell: the debounce again.
        _ = filter.observe(.offHead, at: at(20_000))
        #expect(!filter.isContested)
        #expect(filter.tick(at: at(20_500)) == .offHead)
    }
}
