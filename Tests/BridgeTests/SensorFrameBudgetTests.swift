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
        let admitted = (0..<250).filter { budget.admitFrame(at: start.advanced(byMilliseconds: Int64($0))) }
        #expect(admitted.count == 200)
        #expect(admitted == Array(0..<200))
        #expect(!budget.admitFrame(at: start.advanced(byMilliseconds: 999)))
        #expect(budget.admitFrame(at: start.advanced(byMilliseconds: 1_000)))
    }

    @Test("a relay under the cap never loses a frame: 200 Hz for ten seconds")
    func steadyRate() {
        var budget = SensorFrameBudget()
        let all = (0..<2_000).allSatisfy { budget.admitFrame(at: start.advanced(byMilliseconds: Int64($0) * 5)) }
        #expect(all)
    }

    @Test("one refusal a second")
    func errors() {
        var budget = SensorFrameBudget()
        #expect(budget.admitError(at: start))
        #expect(!budget.admitError(at: start.advanced(byMilliseconds: 999)))
        #expect(budget.admitError(at: start.advanced(byMilliseconds: 1_000)))
        #expect(!budget.admitError(at: start.advanced(byMilliseconds: 1_500)))
    }

    @Test("frames and refusals are counted apart: a flood of refusals leaves the frames' share")
    func apart() {
        var budget = SensorFrameBudget()
        for offset in 0..<500 { _ = budget.admitError(at: start.advanced(byMilliseconds: Int64(offset))) }
        #expect((0..<200).allSatisfy { budget.admitFrame(at: start.advanced(byMilliseconds: Int64($0))) })
    }

    @Test("a clock stepped back starts a new window instead of refusing until it catches up")
    func steppedBack() {
        var budget = SensorFrameBudget()
        for _ in 0..<200 { _ = budget.admitFrame(at: start) }
        #expect(!budget.admitFrame(at: start))
        #expect(budget.admitFrame(at: start.advanced(byMilliseconds: -10_000)))
        #expect(budget.admitError(at: start))
        #expect(budget.admitError(at: start.advanced(byMilliseconds: -10_000)))
    }
}
