import AccessoryKit

/// Automatic re-attachments on trial (household.md, "Found again after a night"; issue 49).
///
/// For the look-alike window after the rules re-attached an accessory by themselves, another
/// address of the same model and colour means they may have picked wrong: one that decrypts
/// with the accessory's encryption key is the accessory itself (only it can make such a
/// payload), and without a key one that advertises again and again is a rival as good as the
/// one chosen. Either undoes the re-attachment (``EngineInput/undoReattach(_:from:)``): the
/// accessory is away again, both addresses are offered as look-alikes, and the rules do not
/// re-attach it by themselves again within the window. A person's `accessory/reattach` ends
/// the trial: what a person chose stands.
///
/// With an encryption key, an address whose payload does not decrypt is nobody's rival: it is
/// not the accessory, and a decoy must not undo what is right.
///
/// Memory is bounded: one trial and one hold per accessory re-attached, at most
/// ``rivalsKept`` rival addresses per trial, all forgotten after the window.
struct ReattachProbation {
    struct Trial: Equatable {
        /// The address the accessory was re-attached to.
        var address: BluetoothAddress
        var profile: ProximityProfile
        var since: Timestamp
        /// Rival addresses heard so far, and how many advertisements each.
        var rivals: [BluetoothAddress: Int] = [:]
    }

    /// What an advertisement of an unknown address did to the trials.
    enum Verdict: Equatable {
        /// The re-attachment of `id` to `address` is undone because of `rival`.
        case undo(id: BluetoothAddress, address: BluetoothAddress, rival: BluetoothAddress, proven: Bool)
    }

    static let rivalsKept = 16
    /// Advertisements a rival without a key needs: a one-off frame is no accessory.
    static let minimumRivalAdvertisements = 2

    let windowMilliseconds: Int64
    private(set) var trials: [BluetoothAddress: Trial] = [:]
    /// Accessories whose automatic re-attachment was undone, and when.
    private(set) var undone: [BluetoothAddress: Timestamp] = [:]

    init(windowMilliseconds: Int64) {
        self.windowMilliseconds = windowMilliseconds
    }

    /// Whether any trial runs (nothing to look at otherwise: the common case).
    var isEmpty: Bool { trials.isEmpty }

    /// The rules re-attached `id` to `address` now.
    mutating func started(_ id: BluetoothAddress, address: BluetoothAddress, profile: ProximityProfile, at now: Timestamp) {
        expire(at: now)
        trials[id] = Trial(address: address, profile: profile, since: now)
    }

    /// A person re-attached it, or it was removed or given an IRK: no trial any more.
    mutating func ended(_ id: BluetoothAddress) {
        trials[id] = nil
        undone[id] = nil
    }

    /// Whether the rules may not re-attach `id` by themselves now (undone within the window).
    func isHeldBack(_ id: BluetoothAddress, at now: Timestamp) -> Bool {
        undone[id].map { now.milliseconds(since: $0) <= windowMilliseconds } ?? false
    }

    /// A proximity-pairing advertisement from an address nobody has.
    /// - Parameters:
    ///   - holds: whether the engine has the accessory re-attached to that address (it may not
    ///     have taken the re-attachment, or a person changed it since): a trial it does not hold
    ///     ends, so nothing is undone that was not done.
    ///   - decrypts: for an accessory on trial, nil when it has no encryption key, else whether
    ///     this advertisement's payload decrypts with it.
    mutating func heard(
        _ address: BluetoothAddress, profile: ProximityProfile, at now: Timestamp,
        holds: (_ id: BluetoothAddress, _ address: BluetoothAddress) -> Bool, decrypts: (BluetoothAddress) -> Bool?
    ) -> Verdict? {
        expire(at: now)
        for id in trials.keys.sorted() {
            guard var trial = trials[id], trial.profile == profile, trial.address != address else { continue }
            guard holds(id, trial.address) else {
                trials[id] = nil
                continue
            }
            let proven: Bool
            switch decrypts(id) {
            case true?:
                proven = true
            case false?:
                continue
            case nil:
                guard trial.rivals[address] != nil || trial.rivals.count < Self.rivalsKept else { continue }
                trial.rivals[address, default: 0] += 1
                trials[id] = trial
                guard trial.rivals[address, default: 0] >= Self.minimumRivalAdvertisements else { continue }
                proven = false
            }
            trials[id] = nil
            undone[id] = now
            return .undo(id: id, address: trial.address, rival: address, proven: proven)
        }
        return nil
    }

    private mutating func expire(at now: Timestamp) {
        if trials.contains(where: { now.milliseconds(since: $0.value.since) > windowMilliseconds }) {
            trials = trials.filter { now.milliseconds(since: $0.value.since) <= windowMilliseconds }
        }
        if undone.contains(where: { now.milliseconds(since: $0.value) > windowMilliseconds }) {
            undone = undone.filter { now.milliseconds(since: $0.value) <= windowMilliseconds }
        }
    }
}
