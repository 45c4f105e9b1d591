import AccessoryKit
import Configuration
import JSON
import Telemetry

/// The gateways for `bridge/gateways`: one entry per `gateways:` entry of the configuration
/// (its name and format, from the start), and under each the gateways heard through it (the
/// name its topic carries: the `+` level, ESPresense's room), each with its own state.
///
/// A configured entry is `unknown` until something is heard through it, then `online` while
/// any of its heard gateways is online, else `offline`; its `last_seen` is the latest of
/// theirs. The heard gateways are bounded in all, so a flood of invented gateway names cannot
/// grow the list without limit (names beyond the bound are counted, not added).
///
/// Each heard gateway also says what it gives (household.md, "What gateways and advertisements
/// really say"): its advertisements in the last minute, the share of them with manufacturer
/// data, how many counted for an accessory, and the problems (``GatewayProblem``) that make it
/// useless to the bridge. The configured entry sums its heard gateways' figures.
struct GatewayTracker {
    struct Heard {
        var state: String
        var lastSeen: Timestamp?
        var window = AdvertisementWindow()
        var problems: [GatewayProblem] = []
        /// Until when it has ``GatewayProblem/lookalikeFlood``.
        var floodUntil: Timestamp?
        /// The Home Assistant area the relay sent with its last advertisement (`ha_relay`).
        var area: String?
        /// What a source that hears by itself (the box's adapter) says is wrong with it; kept
        /// through every evaluation of the minute, until the source says it went.
        var sourceProblem: GatewayProblem?
        /// How such a source scans (`active`, `passive`), shown on `bridge/gateways`.
        var scanning: String?
    }

    struct Configured {
        let name: String
        let format: GatewayFormat
        var heard: [String: Heard] = [:]
        /// Since the start, for `/metrics` (per entry, so the labels stay few).
        var totals = AdvertisementWindow.Counts()

        var state: String {
            if heard.isEmpty { return "unknown" }
            return heard.values.contains { $0.state == "online" } ? "online" : "offline"
        }

        var lastSeen: Timestamp? { heard.values.compactMap(\.lastSeen).max() }
    }

    static let maximumHeardGateways = 256

    /// A problem that appeared on a heard gateway (logged once, then shown until it goes).
    struct Appeared: Hashable {
        var gateway: String
        var problem: GatewayProblem
        var message: String
    }

    /// Gateways heard and online now (`aabridge_gateways_online`).
    var onlineCount: Int { configured.reduce(0) { $0 + $1.heard.values.count { $0.state == "online" } } }
    private(set) var configured: [Configured]
    private(set) var heardCount = 0
    /// Messages from gateway names not added because the bound was reached.
    private(set) var namesLeftOut = 0
    /// The Apple accessories without an IRK, by name (what an ESPresense node needs).
    private(set) var needingIRK: [String] = []

    init(configured: [(name: String, format: GatewayFormat)] = []) {
        self.configured = configured.map { Configured(name: $0.name, format: $0.format) }
    }

    /// Records traffic from gateway `name`, heard through the configured entry at `index`;
    /// returns true when the list changed shape or state (a new gateway, one back online).
    mutating func seen(_ name: String, through index: Int, at time: Timestamp) -> Bool {
        guard configured.indices.contains(index) else { return false }
        if var heard = configured[index].heard[name] {
            heard.lastSeen = time
            let changed = heard.state != "online"
            heard.state = "online"
            configured[index].heard[name] = heard
            return changed
        }
        return add(name, through: index, Heard(state: "online", lastSeen: time))
    }

    /// A gateway heard for the first time, unless the bound is reached (then it is counted).
    private mutating func add(_ name: String, through index: Int, _ heard: Heard) -> Bool {
        guard heardCount < Self.maximumHeardGateways else {
            namesLeftOut += 1
            return false
        }
        heardCount += 1
        configured[index].heard[name] = heard
        return true
    }

    /// Records an advertisement from gateway `name`, heard through the entry at `index`, as
    /// ``seen(_:through:at:)`` does, with its figures; returns whether the list changed shape or
    /// state, and the problems that appeared with it. One lookup of the name: this runs for
    /// every advertisement.
    mutating func advertisement(
        _ name: String, through index: Int, withManufacturerData: Bool, attributed: Bool, lookalikeFloodUntil: Timestamp? = nil,
        at time: Timestamp, area: String? = nil
    ) -> (changed: Bool, appeared: [Appeared]) {
        guard configured.indices.contains(index) else { return (false, []) }
        var changed = false
        let position: Dictionary<String, Heard>.Index
        if let known = configured[index].heard.index(forKey: name) {
            position = known
        } else {
            changed = seen(name, through: index, at: time)
            guard let added = configured[index].heard.index(forKey: name) else { return (changed, []) }
            position = added
        }
        // In place: reading `values[position].field` would copy the whole `Heard` each time.
        changed =
            Self.count(
                &configured[index].heard.values[position], withManufacturerData: withManufacturerData, attributed: attributed,
                lookalikeFloodUntil: lookalikeFloodUntil, at: time, area: area) || changed
        configured[index].totals.advertisements += 1
        if withManufacturerData { configured[index].totals.withManufacturerData += 1 }
        if attributed { configured[index].totals.attributed += 1 }
        return (changed, evaluate(at: position, through: index, at: time))
    }

    /// One advertisement's figures on its gateway; true when its area or state changed.
    private static func count(
        _ heard: inout Heard, withManufacturerData: Bool, attributed: Bool, lookalikeFloodUntil: Timestamp?, at time: Timestamp,
        area: String?
    ) -> Bool {
        var changed = false
        heard.lastSeen = time
        if let area, heard.area != area {
            heard.area = area
            changed = true
        }
        if heard.state != "online" {
            heard.state = "online"
            changed = true
        }
        if let lookalikeFloodUntil { heard.floodUntil = lookalikeFloodUntil }
        heard.window.count(withManufacturerData: withManufacturerData, attributed: attributed, at: time)
        return changed
    }

    /// The Apple accessories without an IRK changed: the ESPresense gateways' problems follow
    /// (each gateway's minute taken at `time`, or at its last advertisement).
    mutating func needIRK(_ names: [String], at time: Timestamp?) -> [Appeared] {
        guard names != needingIRK else { return [] }
        needingIRK = names
        return evaluateAll(at: time)
    }

    /// Every heard gateway's problems at `time` (a quiet gateway's minute runs out too), or at
    /// its last advertisement.
    mutating func evaluateAll(at time: Timestamp?) -> [Appeared] {
        var appeared: [Appeared] = []
        for index in configured.indices {
            for name in configured[index].heard.keys.sorted() { appeared += evaluate(name, through: index, at: time) }
        }
        return appeared
    }

    /// Whether any heard gateway's problems differ from what was last published.
    private(set) var problemsChanged = false

    mutating func published() { problemsChanged = false }

    /// One heard gateway's problems at `time` (after its status changed).
    mutating func evaluate(_ name: String, through index: Int, at time: Timestamp?) -> [Appeared] {
        guard let position = configured[index].heard.index(forKey: name) else { return [] }
        return evaluate(at: position, through: index, at: time)
    }

    private mutating func evaluate(at position: Dictionary<String, Heard>.Index, through index: Int, at time: Timestamp?) -> [Appeared] {
        let format = configured[index].format
        let needsIRK = !needingIRK.isEmpty && format == .espresense
        guard
            let changed = Self.problems(
                &configured[index].heard.values[position], relay: format == .haRelay, needsIRK: needsIRK, at: time)
        else { return [] }
        problemsChanged = true
        let name = configured[index].heard.keys[position]
        return changed.now.filter { !changed.before.contains($0) }.map {
            Appeared(gateway: name, problem: $0, message: $0.message(needingIRK: needingIRK))
        }
    }

    /// A heard gateway's problems at `time` (`relay`: heard through a relay entry), set on it
    /// when they changed: then the new and the previous ones, else nil. Reads the gateway in
    /// place (a copy of `Heard` per field read was most of a message's cost here).
    private static func problems(
        _ heard: inout Heard, relay: Bool, needsIRK: Bool, at time: Timestamp?
    ) -> (now: [GatewayProblem], before: [GatewayProblem])? {
        let lastSeen = heard.lastSeen
        let minute = heard.window.lastMinute(at: time ?? lastSeen ?? Timestamp(milliseconds: 0))
        let noData = minute.advertisements >= GatewayProblem.minimumAdvertisements && minute.withManufacturerData == 0
        let flood = heard.floodUntil.map { $0 > (time ?? lastSeen ?? $0) } ?? false
        // A relay's scanner says so itself (its status), or its heartbeat stops.
        let offline = relay && heard.state == "offline"
        let silent: Bool
        if !relay || offline {
            silent = false
        } else if let time, let lastSeen {
            silent = time.milliseconds(since: lastSeen) >= GatewayProblem.silentMilliseconds
        } else {
            // Without a time (an IRK changed) silence is what it was.
            silent = heard.problems.contains(.relaySilent)
        }
        // The common case, nothing wrong before or now, allocates nothing.
        if heard.problems.isEmpty && !noData && !needsIRK && !offline && !silent && !flood && heard.sourceProblem == nil { return nil }
        var problems: [GatewayProblem] = []
        if let sourceProblem = heard.sourceProblem { problems.append(sourceProblem) }
        if noData { problems.append(.noManufacturerData) }
        if needsIRK { problems.append(.espresenseNeedsIRK) }
        if silent { problems.append(.relaySilent) }
        if offline { problems.append(.scannerOffline) }
        if flood { problems.append(.lookalikeFlood) }
        guard problems != heard.problems else { return nil }
        let before = heard.problems
        heard.problems = problems
        return (problems, before)
    }

    /// Every heard gateway: the entry it was heard through and its name, in payload order.
    var heardGateways: [(entry: String, name: String)] {
        configured.flatMap { entry in entry.heard.keys.sorted().map { (entry.name, $0) } }
    }

    /// Problems per entry and code, for `/metrics`: how many of its heard gateways have each.
    func problemCount(_ problem: GatewayProblem, entry index: Int) -> Int {
        configured[index].heard.values.count { $0.problems.contains(problem) }
    }

    /// What a source that hears by itself says of its gateway `name` (through the entry at
    /// `index`): online or not, its problem (nil when it went), how it scans; returns whether
    /// `bridge/gateways` changed, and the problem if it appeared.
    mutating func source(
        _ name: String, through index: Int, online: Bool, problem: GatewayProblem?, scanning: String?, at time: Timestamp
    ) -> (changed: Bool, appeared: [Appeared]) {
        guard configured.indices.contains(index) else { return (false, []) }
        var changed = status(name, through: index, online: online, at: time)
        guard var heard = configured[index].heard[name] else { return (changed, []) }
        if online { heard.lastSeen = time }
        if heard.scanning != scanning || heard.sourceProblem != problem { changed = true }
        heard.scanning = scanning
        heard.sourceProblem = problem
        configured[index].heard[name] = heard
        return (changed, evaluate(name, through: index, at: time))
    }

    /// Records an online/offline status of gateway `name` (through the entry at `index`);
    /// returns true when its state changed.
    mutating func status(_ name: String, through index: Int, online: Bool, at time: Timestamp) -> Bool {
        guard configured.indices.contains(index) else { return false }
        let state = online ? "online" : "offline"
        if var heard = configured[index].heard[name] {
            // The relay's heartbeat is an `online` status once a minute: it is traffic, so
            // a relay that still speaks is not silent even when nothing is heard.
            if online && configured[index].format == .haRelay { heard.lastSeen = time }
            guard heard.state != state else {
                configured[index].heard[name] = heard
                return false
            }
            heard.state = state
            configured[index].heard[name] = heard
            return true
        }
        return add(name, through: index, Heard(state: state, lastSeen: online ? time : nil))
    }

    /// `bridge/gateways` at `now`: the configured entries in configuration order, each heard
    /// gateway under the entry whose topic matched it, sorted by name, each with its figures of
    /// the last minute; an entry's figures are its heard gateways' together.
    func payload(at now: Timestamp) -> JSONValue {
        .array(
            configured.map { entry in
                var total = AdvertisementWindow.Counts()
                var problems: [GatewayProblem] = []
                let heard: [JSONValue] = entry.heard.sorted { $0.key < $1.key }.map { name, heard in
                    let minute = heard.window.lastMinute(at: now)
                    total = total + minute
                    for problem in heard.problems where !problems.contains(problem) { problems.append(problem) }
                    var fields: [(String, JSONValue)] = [
                        ("name", .string(name)), ("state", .string(heard.state)), ("last_seen", Self.time(heard.lastSeen)),
                    ]
                    if let area = heard.area { fields.append(("area", .string(area))) }
                    if let scanning = heard.scanning { fields.append(("scanning", .string(scanning))) }
                    fields += figures(minute, problems: heard.problems)
                    return .object(fields)
                }
                var fields: [(String, JSONValue)] = [
                    ("name", .string(entry.name)), ("format", .string(entry.format.rawValue)), ("state", .string(entry.state)),
                    ("last_seen", Self.time(entry.lastSeen)),
                ]
                fields += figures(total, problems: problems.sorted { $0.rawValue < $1.rawValue })
                fields.append(("heard", .array(heard)))
                return .object(fields)
            })
    }

    private func figures(_ minute: AdvertisementWindow.Counts, problems: [GatewayProblem]) -> [(String, JSONValue)] {
        // A share of nothing is no share: null until the gateway reports advertisements.
        let share: JSONValue =
            minute.advertisements == 0
            ? .null : .double((Double(minute.withManufacturerData) / Double(minute.advertisements) * 100).rounded() / 100)
        return [
            ("advertisements_per_min", .int(minute.advertisements)), ("with_manufacturer_data", share),
            ("attributed", .int(minute.attributed)),
            (
                "problems",
                .array(problems.map { ["code": .string($0.rawValue), "message": .string($0.message(needingIRK: needingIRK))] })
            ),
        ]
    }

    private static func time(_ timestamp: Timestamp?) -> JSONValue {
        timestamp.map { .string(ISO8601.string($0)) } ?? .null
    }
}
