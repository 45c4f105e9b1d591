import AccessoryKit
import Telemetry

/// Follows an accessory to its next resolvable private address when nobody has given its IRK
/// (identity.md, "Following a rotation without keys").
///
/// An accessory that advertises proximity pairing is *tracked*: its address, model, colour,
/// battery levels, when it was last heard and by which gateways. An address that belongs to no
/// known accessory and advertises proximity pairing is a *candidate*. A candidate is followed
/// as accessory A when:
/// - same model and colour, and each battery level both know is within 10 points;
/// - A has been silent since before the candidate's first advertisement (give or take
///   ``overlapMilliseconds``), for at least ``silenceMilliseconds`` and two of its usual
///   intervals between sightings, and was heard within its availability window;
/// - a gateway that heard the candidate heard A within that window;
/// - no other accessory fits the candidate and no other new address fits A (an address heard
///   once, only by gateways that relay many fresh look-alikes, is a decoy, not a rival:
///   ``LookalikeTracker/isDecoy(heardOnce:gateways:at:)``).
/// The decision waits ``settleMilliseconds`` after the candidate's first advertisement, so that
/// a second accessory rotating at the same moment (two identical AirPods in one flat) is seen
/// and the choice refused rather than guessed; after ``windowMilliseconds`` (longer for an
/// accessory heard seldom: three of its intervals past the settling) an address is no longer
/// new and is never followed.
///
/// The intervals matter because gateways report at their own pace: one that publishes an
/// accessory every 5 s makes 3 s without it nothing unusual, and a pair still advertising
/// would count as silent when an identical pair's new address appears beside it.
///
/// Accessories with an IRK are not tracked: their addresses are resolved by the key, and an
/// address the key does not resolve is not theirs.
///
/// Memory is bounded: one track per known accessory (gateways per track capped), and at most
/// ``candidateCapacity`` candidates; when full, the one heard least recently goes. Addresses
/// past their window stay as candidates until evicted, so an old neighbour is not mistaken for
/// a new address.
struct RotationFollower {
    /// What is compared between an accessory and a candidate.
    struct Profile: Hashable {
        var model: UInt16
        var colour: UInt8?
        var battery: Battery?

        init(model: UInt16, colour: UInt8?, battery: Battery?) {
            self.model = model
            self.colour = colour
            self.battery = battery
        }

        init(_ pairing: ProximityPairing) {
            // The nibbles as the earbuds' layout reads them: profiles are only compared for the same
            // model, so the layout cannot differ between them, and no catalogue lookup is needed.
            self.init(model: pairing.model, colour: pairing.colour, battery: pairing.battery(.pods))
        }

        /// Same model and colour, and every level both know within ``batteryTolerance``.
        func fits(_ other: Profile) -> Bool {
            guard model == other.model, colour == other.colour else { return false }
            let pairs =
                [(battery?.left, other.battery?.left), (battery?.right, other.battery?.right)]
                + [(battery?.chargingCase, other.battery?.chargingCase), (battery?.main, other.battery?.main)]
            return pairs.allSatisfy { pair in
                guard let mine = pair.0, let theirs = pair.1 else { return true }
                return abs(mine - theirs) <= RotationFollower.batteryTolerance
            }
        }
    }

    /// What a candidate's sighting led to.
    enum Decision: Equatable {
        case none
        /// The candidate is this accessory now.
        case follow(BluetoothAddress)
        /// More than one accessory, or more than one new address, fits: nothing is followed.
        case ambiguous(String)
    }

    static let silenceMilliseconds: Int64 = 3_000
    static let settleMilliseconds: Int64 = 3_000
    static let windowMilliseconds: Int64 = 15_000
    static let overlapMilliseconds: Int64 = 1_000
    static let batteryTolerance = 10
    static let candidateCapacity = 256
    static let gatewaysPerTrack = 16
    /// The longest interval between sightings that is taken as an accessory's usual one.
    static let maximumIntervalMilliseconds: Int64 = 20_000
    /// At most one ambiguity warning this often: look-alikes advertising in numbers (a shop, or
    /// someone forging them) must not flood `bridge/log`.
    static let reportIntervalMilliseconds: Int64 = 10_000

    private struct Track {
        var address: BluetoothAddress
        var profile: Profile
        var lastHeard: Timestamp
        /// Gateway -> when it last heard the accessory.
        var gateways: [String: Timestamp]
        /// Its usual time between sightings (smoothed; 0 until two were apart).
        var interval: Int64 = 0

        /// How long it must have been silent to have rotated: two of its usual intervals, and
        /// never less than ``RotationFollower/silenceMilliseconds``.
        var silence: Int64 { max(RotationFollower.silenceMilliseconds, 2 * interval) }

        /// How long an address stays new for it.
        var window: Int64 { max(RotationFollower.windowMilliseconds, 3 * interval + RotationFollower.settleMilliseconds) }

        mutating func heard(at address: BluetoothAddress, profile: Profile, gateway: String, now: Timestamp) {
            // Gaps shorter than half a second are one advertisement reported by several gateways.
            let gap = now.milliseconds(since: lastHeard)
            if gap >= 500 {
                let capped = min(gap, RotationFollower.maximumIntervalMilliseconds)
                interval = interval == 0 ? capped : (3 * interval + capped) / 4
            }
            self.address = address
            self.profile = profile
            lastHeard = now
            if gateways[gateway] == nil && gateways.count >= RotationFollower.gatewaysPerTrack,
                let oldest = gateways.min(by: { $0.value < $1.value })?.key
            {
                gateways[oldest] = nil
            }
            gateways[gateway] = now
        }
    }

    private struct Candidate {
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        var profile: Profile
        var gateways: Set<String>
        var advertisements = 1
        /// Its ambiguity was reported (once per candidate).
        var reported = false
    }

    /// How long an accessory counts as available after its last sighting.
    let availabilityMilliseconds: Int64
    private var tracks: [BluetoothAddress: Track] = [:]
    private var candidates: [BluetoothAddress: Candidate] = [:]
    private var lastReport: Timestamp?
    private var unreported = 0

    init(availabilityMilliseconds: Int64) {
        self.availabilityMilliseconds = availabilityMilliseconds
    }

    /// Whether any accessory could be followed (no candidate needs looking at otherwise).
    var isTracking: Bool { !tracks.isEmpty }

    /// How many unknown addresses are remembered (bounded by ``candidateCapacity``).
    var candidateCount: Int { candidates.count }

    /// A proximity-pairing sighting of a known accessory without an IRK.
    ///
    /// Runs for every advertisement of such an accessory, so the track is updated in place
    /// (a copy would copy its gateway table each time).
    mutating func heard(_ id: BluetoothAddress, at address: BluetoothAddress, profile: Profile, gateway: String, now: Timestamp) {
        if !candidates.isEmpty { candidates.removeValue(forKey: address) }
        if let index = tracks.index(forKey: id) {
            tracks.values[index].heard(at: address, profile: profile, gateway: gateway, now: now)
        } else {
            tracks[id] = Track(address: address, profile: profile, lastHeard: now, gateways: [gateway: now])
        }
    }

    /// A candidate was paired (`picker/select`): it is accessory `id` now, tracked from what its
    /// advertisements said, so a rotation right after the pairing is followed (household.md:
    /// the pairing sighting counts).
    mutating func adopt(_ id: BluetoothAddress) {
        guard tracks[id] == nil, let candidate = candidates.removeValue(forKey: id) else { return }
        tracks[id] = Track(
            address: id, profile: candidate.profile, lastHeard: candidate.lastSeen,
            gateways: Dictionary(uniqueKeysWithValues: candidate.gateways.map { ($0, candidate.lastSeen) }))
    }

    /// The accessory is gone, or has an IRK now: it is not followed any more.
    mutating func forget(_ id: BluetoothAddress) {
        tracks[id] = nil
    }

    /// Whether `address` is a new address heard before (a candidate).
    func isCandidate(_ address: BluetoothAddress) -> Bool { candidates[address] != nil }

    /// Whether a tracked accessory has this profile (a fresh address with it is worth counting).
    func fitsTrack(_ profile: Profile) -> Bool { tracks.values.contains { $0.profile.fits(profile) } }

    /// A proximity-pairing sighting from an address that belongs to no known accessory.
    /// - Parameter isDecoy: whether a candidate heard once by these gateways is a decoy.
    mutating func unknown(
        _ address: BluetoothAddress, profile: Profile, gateway: String, now: Timestamp,
        isDecoy: (_ heardOnce: Bool, _ gateways: Set<String>) -> Bool = { _, _ in false }
    ) -> Decision {
        var candidate: Candidate
        if let known = candidates[address] {
            candidate = known
            candidate.lastSeen = now
            candidate.advertisements += 1
            candidate.profile = profile
        } else {
            makeRoom(now: now)
            candidate = Candidate(firstSeen: now, lastSeen: now, profile: profile, gateways: [])
        }
        if candidate.gateways.count < Self.gatewaysPerTrack { candidate.gateways.insert(gateway) }
        candidates[address] = candidate
        let age = now.milliseconds(since: candidate.firstSeen)
        guard age >= Self.settleMilliseconds, age <= Self.longestWindowMilliseconds else { return .none }

        let fitting = tracks.filter { fits($0.value, candidate, now: now) }.keys.sorted()
        guard let id = fitting.first else { return .none }
        // Another accessory that fits but for its silence (one heard less often needs a longer
        // one) is waited for: two pairs fallen silent together would otherwise go to whichever
        // was heard more often, a guess.
        if tracks.contains(where: { !fitting.contains($0.key) && fits($0.value, candidate, now: now, silenceAside: true) }) {
            return .none
        }
        if fitting.count > 1 {
            return report(
                address, now: now,
                "new address \(address) (\(Self.name(profile.model))) fits \(fitting.count) accessories "
                    + "(\(fitting.map(\.description).joined(separator: ", "))): not followed; give each an IRK (\(RequestName.keys.name))")
        }
        let track = tracks[id]!
        let rivals = candidates.filter {
            $0.key != address && fits(track, $0.value, now: now) && !isDecoy($0.value.advertisements < 2, $0.value.gateways)
        }.keys.sorted()
        if !rivals.isEmpty {
            return report(
                address, now: now,
                "accessory \(id) (\(Self.name(profile.model))) fits \(rivals.count + 1) new addresses "
                    + "(\(([address] + rivals).map(\.description).joined(separator: ", "))): not followed; give it an IRK (\(RequestName.keys.name))"
            )
        }
        candidates[address] = nil
        heard(id, at: address, profile: profile, gateway: gateway, now: now)
        return .follow(id)
    }

    /// The longest any accessory's window can be (``Track/window``).
    static let longestWindowMilliseconds = max(windowMilliseconds, 3 * maximumIntervalMilliseconds + settleMilliseconds)

    /// Whether the candidate could be this accessory's next address (the rule on the type).
    /// - Parameter silenceAside: whether it fits but for having been silent long enough.
    private func fits(_ track: Track, _ candidate: Candidate, now: Timestamp, silenceAside: Bool = false) -> Bool {
        let silence = now.milliseconds(since: track.lastHeard)
        guard track.profile.fits(candidate.profile),
            candidate.firstSeen.milliseconds(since: track.lastHeard) >= -Self.overlapMilliseconds,
            silenceAside || silence >= track.silence, silence <= availabilityMilliseconds,
            now.milliseconds(since: candidate.firstSeen) <= track.window
        else { return false }
        return candidate.gateways.contains { gateway in
            track.gateways[gateway].map { now.milliseconds(since: $0) <= availabilityMilliseconds } ?? false
        }
    }

    /// The warning for an ambiguous candidate, once per candidate and at most once per
    /// ``reportIntervalMilliseconds`` (the next one counts those left out meanwhile).
    private mutating func report(_ address: BluetoothAddress, now: Timestamp, _ message: String) -> Decision {
        guard candidates[address]?.reported == false else { return .none }
        candidates[address]?.reported = true
        if let lastReport, now.milliseconds(since: lastReport) < Self.reportIntervalMilliseconds {
            unreported += 1
            return .none
        }
        lastReport = now
        defer { unreported = 0 }
        return .ambiguous(unreported == 0 ? message : message + " (\(unreported) more look-alikes not followed since the last warning)")
    }

    /// Evicts the candidate heard least recently when the table is full.
    private mutating func makeRoom(now: Timestamp) {
        guard candidates.count >= Self.candidateCapacity,
            let stalest = candidates.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key
        else { return }
        candidates[stalest] = nil
    }

    private static func name(_ model: UInt16) -> String {
        AppleModelCatalogue.model(model)?.name ?? "model 0x\(String(model, radix: 16, uppercase: true))"
    }
}
