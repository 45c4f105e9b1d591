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

    static func onTrial() -> ReattachProbation {
        var probation = ReattachProbation(windowMilliseconds: 600_000)
        probation.started(alice, address: attached, profile: profile, at: LookalikeTrackerTests.at(0))
        return probation
    }

    /// `address` heard at `second`; the engine holds the re-attachment unless `holds` is false;
    /// `decrypts` as the accessory's key says (nil: no key).
    static func heard(
        _ probation: inout ReattachProbation, _ address: BluetoothAddress = rival, profile: ProximityProfile = profile, at second: Double,
        decrypts: Bool? = nil, holds: Bool = true
    ) -> ReattachProbation.Verdict? {
        probation.heard(address, profile: profile, at: LookalikeTrackerTests.at(second), holds: { _, _ in holds }) { _ in decrypts }
    }

    @Test("without a key: a rival that advertises twice undoes it; once is not enough; the attached address itself never")
    func rivalWithoutKey() {
        var probation = Self.onTrial()
        #expect(Self.heard(&probation, Self.attached, at: 1) == nil)
        #expect(Self.heard(&probation, at: 2) == nil)
        #expect(Self.heard(&probation, at: 3) == .undo(id: Self.alice, address: Self.attached, rival: Self.rival, proven: false))
        #expect(probation.isEmpty)
        #expect(probation.isHeldBack(Self.alice, at: LookalikeTrackerTests.at(4)))
        #expect(!probation.isHeldBack(Self.alice, at: LookalikeTrackerTests.at(604)))
    }

    @Test("another model or colour is no rival; after the window nothing is on trial")
    func otherProfileAndWindow() {
        var probation = Self.onTrial()
        let other = ProximityProfile(model: 0x2014, colour: 1)
        for second in 1...5 { #expect(Self.heard(&probation, profile: other, at: Double(second)) == nil) }
        for second in 700...705 { #expect(Self.heard(&probation, at: Double(second)) == nil) }
        #expect(probation.isEmpty)
    }

    @Test("with an encryption key: a payload that decrypts undoes it at once; one that does not never does")
    func withKey() {
        var probation = Self.onTrial()
        for second in 1...10 { #expect(Self.heard(&probation, at: Double(second), decrypts: false) == nil) }
        #expect(
            Self.heard(&probation, at: 11, decrypts: true) == .undo(id: Self.alice, address: Self.attached, rival: Self.rival, proven: true)
        )
    }

    @Test("a re-attachment the engine does not hold (not taken, or changed since) ends its trial: nothing is undone")
    func notHeld() {
        var probation = Self.onTrial()
        for second in 1...3 { #expect(Self.heard(&probation, at: Double(second), holds: false) == nil) }
        #expect(probation.isEmpty)
        #expect(!probation.isHeldBack(Self.alice, at: LookalikeTrackerTests.at(4)))
    }

    @Test("a person's accessory/reattach ends the trial and the hold")
    func personDecides() {
        var probation = Self.onTrial()
        probation.ended(Self.alice)
        #expect(probation.isEmpty)
        for second in 1...3 { #expect(Self.heard(&probation, at: Double(second)) == nil) }
        #expect(!probation.isHeldBack(Self.alice, at: LookalikeTrackerTests.at(4)))
    }

    @Test("bounded: at most 16 rival addresses counted per trial")
    func bounded() {
        var probation = Self.onTrial()
        for index in 0..<100 { _ = Self.heard(&probation, BluetoothAddress(rawValue: 0x7D_0000_0000_00 + UInt64(index)), at: 1) }
        #expect(probation.trials[Self.alice]?.rivals.count == ReattachProbation.rivalsKept)
    }
}
