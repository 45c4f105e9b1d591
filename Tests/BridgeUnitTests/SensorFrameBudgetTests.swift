import AccessoryKit
import Testing

@testable import Bridge

/// One accessory's share of the head-tracking stream, with the times given (no clock).
@Suite("Head tracking: the per-accessory budget")
struct SensorFrameBudgetTests {
    let start = Timestamp(milliseconds: 1_800_000_000_000)

    @Test("200 frames in a second, the 201st dropped; the next second starts over")
    func frames() {
        var budget = SensorFrameBudget()
        var admitted: [Int] = []
        for offset in 0..<250 where budget.admitFrame(at: start.advanced(byMilliseconds: Int64(offset))) { admitted.append(offset) }
        #expect(admitted.count == 200)
        #expect(admitted == Array(0..<200))
        let lastMillisecond = budget.admitFrame(at: start.advanced(byMilliseconds: 999))
        #expect(!lastMillisecond)
        let nextSecond = budget.admitFrame(at: start.advanced(byMilliseconds: 1_000))
        #expect(nextSecond)
    }

    @Test("a relay under the cap never loses a frame: 200 Hz for ten seconds")
    func steadyRate() {
        var budget = SensorFrameBudget()
        var admitted = 0
        for index in 0..<2_000 where budget.admitFrame(at: start.advanced(byMilliseconds: Int64(index) * 5)) { admitted += 1 }
        #expect(admitted == 2_000)
    }

    @Test("one refusal a second")
    func errors() {
        var budget = SensorFrameBudget()
        let first = budget.admitError(at: start)
        #expect(first)
        let sameSecond = budget.admitError(at: start.advanced(byMilliseconds: 999))
        #expect(!sameSecond)
        let aSecondLater = budget.admitError(at: start.advanced(byMilliseconds: 1_000))
        #expect(aSecondLater)
        let halfASecondAfter = budget.admitError(at: start.advanced(byMilliseconds: 1_500))
        #expect(!halfASecondAfter)
    }

    @Test("frames and refusals are counted apart: a flood of refusals leaves the frames' share")
    func apart() {
        var budget = SensorFrameBudget()
        for offset in 0..<500 { _ = budget.admitError(at: start.advanced(byMilliseconds: Int64(offset))) }
        var admitted = 0
        for offset in 0..<200 where budget.admitFrame(at: start.advanced(byMilliseconds: Int64(offset))) { admitted += 1 }
        #expect(admitted == 200)
    }

    @Test("a clock stepped back starts a new window instead of refusing until it catches up")
    func steppedBack() {
        var budget = SensorFrameBudget()
        for _ in 0..<200 { _ = budget.admitFrame(at: start) }
        let overTheCap = budget.admitFrame(at: start)
        #expect(!overTheCap)
        let steppedBack = budget.admitFrame(at: start.advanced(byMilliseconds: -10_000))
        #expect(steppedBack)
        let refusal = budget.admitError(at: start)
        #expect(refusal)
        let refusalSteppedBack = budget.admitError(at: start.advanced(byMilliseconds: -10_000))
        #expect(refusalSteppedBack)
    }
}
