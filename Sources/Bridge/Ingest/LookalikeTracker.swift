import AccessoryKit
import Configuration
import JSON

/// Addresses that could be an accessory found again after a night away (household.md, "Found
/// again after a night"), and the rule that re-attaches one by itself.
///
/// A *look-alike* is an address that belongs to no accessory and advertises proximity pairing
/// with the model and colour of at least one *away* accessory (without an IRK, unavailable).
/// Following a rotation needs the old address heard within the availability window; a night in
/// the closed case is longer, so in the morning the new address is a stranger, and this is what
/// finds it.
///
/// With `identity.reattach: auto`, a look-alike is re-attached when, checked again at that
/// moment:
/// - it has advertised at least twice, over at least 5 s;
/// - no other look-alike of its model and colour was heard within `lookalike_window_s`;
/// - continuity singles out one accessory: it was first heard by the gateway that last heard
///   that accessory (its room before it went silent, kept across restarts) and by none of the
///   other candidates' rooms. With one candidate the gateway must be its room too: a
///   neighbour's identical pair heard in the hall in the morning is not the one whose case
///   sleeps in the bedroom. A wrong attachment is worse than a missed one: anything else stays
///   a look-alike, offered on `bridge/lookalikes` for `accessory/reattach`.
/// With `ask` it is only offered; with `off` nothing is looked for.
///
/// Memory is bounded: at most ``capacity`` addresses (the least recently heard goes), each
/// forgotten after `lookalike_window_s` of silence; `bridge/lookalikes` lists the newest
/// ``publishedCount``.
struct LookalikeTracker {
    struct Entry: Hashable {
        var address: BluetoothAddress
        var profile: ProximityProfile
        /// The gateway that heard it first, and every gateway that heard it (at most 16).
        var firstGateway: String
        var gateways: Set<String>
        var gateway: String
        var rssi: Int
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        var advertisements: Int
        /// The away accessories it could be, when last heard.
        var couldBe: [BluetoothAddress]
    }

    /// What one advertisement of a look-alike led to.
    enum Decision: Equatable {
        /// Offered (or nothing new); `first` when it was not a look-alike before.
        case offered(first: Bool)
        /// It is this accessory, found again.
        case reattach(BluetoothAddress)
    }

    static let capacity = 64
    static let publishedCount = 16
    static let gatewaysPerEntry = 16
    static let minimumAdvertisements = 2
    static let minimumSpanMilliseconds: Int64 = 5_000

    let mode: IdentityConfiguration.Reattach
    let windowMilliseconds: Int64
    private(set) var entries: [BluetoothAddress: Entry] = [:]
    /// An address joined or left the list since it was published (published at most every
    /// ``listChangeMilliseconds``, so a crowd passing by costs one message a second).
    private(set) var listChanged = false
    static let listChangeMilliseconds: Int64 = 1_000
    /// Only what is known of the listed addresses changed (RSSI, gateway, last seen): published
    /// at most every ``refreshMilliseconds``, since a neighbour's pair advertises many times
    /// a second.
    private(set) var refreshed = false
    static let refreshMilliseconds: Int64 = 60_000
    /// The fresh addresses each gateway first heard with the profile of an accessory (a
    /// look-alike, or a new address the rotation follower weighed), and when, within the window
    /// (at most ``floodCount`` kept per gateway, at most ``floodGateways`` gateways): a node that
    /// hears many is a source of decoys (a radio inventing addresses, a replay). Its look-alikes
    /// never attach by themselves while it is (household.md, `lookalike_flood`), and an address
    /// it heard once counts as no rival (``isDecoy(heardOnce:gateways:at:)``).
    private(set) var freshByGateway: [String: [(address: BluetoothAddress, at: Timestamp)]] = [:]
    static let floodCount = 8
    static let floodGateways = 16

    init(mode: IdentityConfiguration.Reattach, windowSeconds: Int) {
        self.mode = mode
        windowMilliseconds = Int64(windowSeconds) * 1000
    }

    /// Whether look-alikes are looked for at all.
    var isLooking: Bool { mode != .off }

    /// A proximity-pairing advertisement from an address no accessory has, whose profile the
    /// away accessories `away` (non-empty, with their rooms) share.
    /// - Parameter heldBack: accessories the rules may not re-attach by themselves now (an
    ///   automatic re-attachment of theirs was undone lately: ``ReattachProbation``).
    mutating func heard(
        _ address: BluetoothAddress, profile: ProximityProfile, gateway: String, rssi: Int, at now: Timestamp,
        away: [(id: BluetoothAddress, room: String?)], heldBack: (BluetoothAddress) -> Bool = { _ in false }
    ) -> Decision {
        let first = entries[address] == nil
        var entry =
            entries[address]
            ?? Entry(
                address: address, profile: profile, firstGateway: gateway, gateways: [], gateway: gateway, rssi: rssi, firstSeen: now,
                lastSeen: now, advertisements: 0, couldBe: [])
        if first {
            makeRoom()
            noteFresh(address, gateway: gateway, at: now)
        }
        entry.profile = profile
        entry.gateway = gateway
        entry.rssi = rssi
        entry.lastSeen = now
        entry.advertisements += 1
        if entry.gateways.count < Self.gatewaysPerEntry { entry.gateways.insert(gateway) }
        entry.couldBe = away.map(\.id)
        entries[address] = entry
        if first { listChanged = true } else { refreshed = true }
        if mode == .auto, let id = singledOut(entry, away: away, at: now), !heldBack(id) {
            entries[address] = nil
            listChanged = true
            return .reattach(id)
        }
        return .offered(first: first)
    }

    /// The accessory the rule re-attaches `entry` to, if it singles one out now.
    private func singledOut(_ entry: Entry, away: [(id: BluetoothAddress, room: String?)], at now: Timestamp) -> BluetoothAddress? {
        guard entry.advertisements >= Self.minimumAdvertisements,
            entry.lastSeen.milliseconds(since: entry.firstSeen) >= Self.minimumSpanMilliseconds,
            !isFlooding(entry.firstGateway, at: now)
        else { return nil }
        let rivals = entries.values.contains { other in
            other.address != entry.address && other.profile == entry.profile
                && now.milliseconds(since: other.lastSeen) <= windowMilliseconds
                && !isDecoy(heardOnce: other.advertisements < 2, gateways: other.gateways, at: now)
        }
        guard !rivals else { return nil }
        // Continuity: first heard where the accessory was last heard, and nowhere another
        // candidate was.
        let continuing = away.filter { candidate in
            candidate.room == entry.firstGateway
                && !away.contains { other in
                    other.id != candidate.id && other.room.map { entry.gateways.contains($0) } == true
                }
        }
        return continuing.count == 1 ? continuing[0].id : nil
    }

    /// The address is attributed to an accessory now (its IRK, a rotation followed, a
    /// re-attachment by request): it is no look-alike any more.
    mutating func forget(_ address: BluetoothAddress) {
        guard !entries.isEmpty, entries.removeValue(forKey: address) != nil else { return }
        listChanged = true
    }

    /// Forgets what was not heard within the window.
    mutating func expire(at now: Timestamp) {
        let before = entries.count
        entries = entries.filter { now.milliseconds(since: $0.value.lastSeen) <= windowMilliseconds }
        if entries.count != before { listChanged = true }
    }

    /// When the next entry expires (nil: none).
    var nextExpiry: Timestamp? {
        entries.values.map(\.lastSeen).min().map { $0.advanced(byMilliseconds: windowMilliseconds + 1) }
    }

    /// The published list is current.
    mutating func published() {
        listChanged = false
        refreshed = false
    }

    /// The published look-alikes each accessory could be, by address (Home Assistant's
    /// "Look-alike" options: they change only when the list's membership does).
    var options: [BluetoothAddress: [BluetoothAddress]] {
        var options: [BluetoothAddress: [BluetoothAddress]] = [:]
        for entry in newest.prefix(Self.publishedCount) {
            for id in entry.couldBe { options[id, default: []].append(entry.address) }
        }
        return options.mapValues { $0.sorted() }
    }

    /// Every entry, newest first.
    var newest: [Entry] {
        entries.values.sorted { ($0.lastSeen, $0.address) > ($1.lastSeen, $1.address) }
    }

    /// `bridge/lookalikes`: `[{"address","model","colour","gateway","rssi","last_seen","could_be"}]`,
    /// newest first, at most ``publishedCount``.
    func payload(modelName: (UInt16) -> String?) -> JSONValue {
        .array(
            newest.prefix(Self.publishedCount).map { entry in
                [
                    "address": .string(entry.address.description),
                    "model": .string(modelName(entry.profile.model) ?? "0x" + String(entry.profile.model, radix: 16, uppercase: true)),
                    "colour": entry.profile.colour.map { .int(Int($0)) } ?? .null,
                    "gateway": .string(entry.gateway),
                    "rssi": .int(entry.rssi),
                    "last_seen": .string(ISO8601.string(entry.lastSeen)),
                    "could_be": .array(entry.couldBe.map { .string($0.description) }),
                ]
            })
    }

    /// Whether `gateway` first heard ``floodCount`` fresh addresses within the window.
    func isFlooding(_ gateway: String, at now: Timestamp) -> Bool {
        (freshByGateway[gateway]?.count { now.milliseconds(since: $0.at) <= windowMilliseconds } ?? 0) >= Self.floodCount
    }

    /// Whether an address counts as a decoy rather than a rival: heard once, and only by
    /// gateways that are flooding. A real accessory advertises again and again (a second pair
    /// in the flat stays a rival after its second advertisement); a radio inventing an address
    /// every few seconds would otherwise keep every accessory of that profile from being
    /// followed or re-attached (issue 49, finding 3). Being a decoy never attaches anything.
    func isDecoy(heardOnce: Bool, gateways: Set<String>, at now: Timestamp) -> Bool {
        heardOnce && !gateways.isEmpty && gateways.allSatisfy { isFlooding($0, at: now) }
    }

    /// A fresh address with an accessory's profile, first heard by `gateway` (counted once per
    /// address, whichever of the follower and the look-alikes saw it first).
    mutating func noteFresh(_ address: BluetoothAddress, gateway: String, at now: Timestamp) {
        if freshByGateway[gateway] == nil, freshByGateway.count >= Self.floodGateways,
            let quietest = freshByGateway.min(by: { ($0.value.last?.at ?? now) < ($1.value.last?.at ?? now) })?.key
        {
            freshByGateway[quietest] = nil
        }
        var fresh = freshByGateway[gateway, default: []].filter { now.milliseconds(since: $0.at) <= windowMilliseconds }
        guard !fresh.contains(where: { $0.address == address }) else { return }
        fresh.append((address, now))
        freshByGateway[gateway] = Array(fresh.suffix(Self.floodCount))
    }

    /// Makes room for one more entry, the least recently heard going.
    private mutating func makeRoom() {
        guard entries.count >= Self.capacity, let stalest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key else {
            return
        }
        entries[stalest] = nil
    }
}
