import AccessoryKit
import Testing

@testable import Bridge

/// Issue 49: an automatic re-attachment is on trial for the look-alike window, and undone when a
/// rival of the same profile, or the accessory itself, is heard (the rule alone, times given).
@Suite("Re-attachments on trial")
struct ReattachProbationTests {
    // Alice and the addresses of the look-alike rule's tests.
    static let profile = LookalikeTrackerTests.profile
    static let alice = LookalikeTrackerTests.alice
    static let attached = LookalikeTrackerTests.morning
    static let rival = LookalikeTrackerTests.other

    static func at(_ seconds: Double) -> Timestamp { LookalikeTrackerTests.at(seconds) }

    static func onTrial() -> ReattachProbation {
        var probation = ReattachProbation(windowMilliseconds: 600_000)
        probation.started(alice, address: attached, profile: profile, at: at(0))
        return probation
    }

    @Test("without a key: a rival that advertises twice undoes it; once is not enough; the attached address itself never")
    func rivalWithoutKey() {
        var probation = Self.onTrial()
        #expect(probation.heard(Self.attached, profile: Self.profile, at: Self.at(1)) { _ in nil } == nil)
        #expect(probation.heard(Self.rival, profile: Self.profile, at: Self.at(2)) { _ in nil } == nil)
        #expect(
            probation.heard(Self.rival, profile: Self.profile, at: Self.at(3)) { _ in nil }
                == .undo(id: Self.alice, address: Self.attached, rival: Self.rival, proven: false))
        #expect(probation.isEmpty)
        #expect(probation.isHeldBack(Self.alice, at: Self.at(4)))
        #expect(!probation.isHeldBack(Self.alice, at: Self.at(604)))
    }

    @Test("another model or colour is no rival; after the window nothing is on trial")
    func otherProfileAndWindow() {
        var probation = Self.onTrial()
        let other = ProximityProfile(model: 0x2014, colour: 1)
        for second in 1...5 { #expect(probation.heard(Self.rival, profile: other, at: Self.at(Double(second))) { _ in nil } == nil) }
        for second in 700...705 {
            #expect(probation.heard(Self.rival, profile: Self.profile, at: Self.at(Double(second))) { _ in nil } == nil)
        }
        #expect(probation.isEmpty)
    }

    @Test("with an encryption key: a payload that decrypts undoes it at once; one that does not never does")
    func withKey() {
        var probation = Self.onTrial()
        for second in 1...10 {
            #expect(probation.heard(Self.rival, profile: Self.profile, at: Self.at(Double(second))) { _ in false } == nil)
        }
        #expect(
            probation.heard(Self.rival, profile: Self.profile, at: Self.at(11)) { _ in true }
                == .undo(id: Self.alice, address: Self.attached, rival: Self.rival, proven: true))
    }

    @Test("a person's accessory/reattach ends the trial and the hold")
    func personDecides() {
        var probation = Self.onTrial()
        probation.ended(Self.alice)
        #expect(probation.isEmpty)
        for second in 1...3 { #expect(probation.heard(Self.rival, profile: Self.profile, at: Self.at(Double(second))) { _ in nil } == nil) }
        #expect(!probation.isHeldBack(Self.alice, at: Self.at(4)))
    }

    @Test("bounded: at most 16 rival addresses counted per trial")
    func bounded() {
        var probation = Self.onTrial()
        for index in 0..<100 {
            _ = probation.heard(BluetoothAddress(rawValue: 0x7D_0000_0000_00 + UInt64(index)), profile: Self.profile, at: Self.at(1)) { _ in
                nil
            }
        }
        #expect(probation.trials[Self.alice]?.rivals.count == ReattachProbation.rivalsKept)
    }
}
