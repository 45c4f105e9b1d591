import Testing

@testable import AccessoryKit

@Suite("Source tracker")
struct SourceTrackerTests {
    let a = Fixtures.phone, b = Fixtures.laptop, c = Fixtures.tv

    @Test func connectAppendsInOrder() {
        var tracker = SourceTracker()
        #expect(tracker.primary == nil && tracker.secondary == nil)
        #expect(tracker.connect(a) == true)
        #expect(tracker.primary == a && tracker.secondary == nil)
        #expect(tracker.connect(b) == true)
        #expect(tracker.connect(c) == true)
        #expect(tracker.sources == [a, b, c])
        #expect(tracker.primary == a && tracker.secondary == b)
        #expect(tracker.connect(b) == false)
    }

    @Test func disconnectRemovesAndShifts() {
        var tracker = SourceTracker(sources: [a, b, c])
        #expect(tracker.disconnect(a) == true)
        #expect(tracker.primary == b && tracker.secondary == c)
        #expect(tracker.disconnect(a) == false)
        #expect(tracker.disconnect(c) == true)
        #expect(tracker.primary == b && tracker.secondary == nil)
    }

    @Test func preferredMovesToTheFront() {
        var tracker = SourceTracker(sources: [a, b, c])
        #expect(tracker.prefer(c) == true)
        #expect(tracker.sources == [c, a, b])
        #expect(tracker.prefer(c) == false)
        var empty = SourceTracker()
        #expect(empty.prefer(a) == true)
        #expect(empty.sources == [a])
    }

    @Test func replaceAndClear() {
        var tracker = SourceTracker(sources: [a])
        #expect(tracker.replace(with: [b, a]) == true)
        #expect(tracker.replace(with: [b, a]) == false)
        #expect(tracker.clear() == true)
        #expect(tracker.primary == nil && tracker.secondary == nil)
        #expect(tracker.clear() == false)
    }
}
