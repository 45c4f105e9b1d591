import AccessoryKit
import Configuration
import JSON

/// The gateways for `bridge/gateways`: one entry per `gateways:` entry of the configuration
/// (its name and format, from the start), and under each the gateways heard through it (the
/// name its topic carries: the `+` level, ESPresense's room), each with its own state.
///
/// A configured entry is `unknown` until something is heard through it, then `online` while
/// any of its heard gateways is online, else `offline`; its `last_seen` is the latest of
/// theirs. The heard gateways are bounded in all, so a flood of invented gateway names cannot
/// grow the list without limit.
struct GatewayTracker {
    struct Heard {
        var state: String
        var lastSeen: Timestamp?
    }

    struct Configured {
        let name: String
        let format: String
        var heard: [String: Heard] = [:]

        var state: String {
            if heard.isEmpty { return "unknown" }
            return heard.values.contains { $0.state == "online" } ? "online" : "offline"
        }

        var lastSeen: Timestamp? { heard.values.compactMap(\.lastSeen).max() }
    }

    static let maximumHeardGateways = 256

    /// Gateways heard and online now (`aabridge_gateways_online`).
    var onlineCount: Int { configured.reduce(0) { $0 + $1.heard.values.count { $0.state == "online" } } }
    private(set) var configured: [Configured]
    private(set) var heardCount = 0

    init(configured: [(name: String, format: String)] = []) {
        self.configured = configured.map { Configured(name: $0.name, format: $0.format) }
    }

    init(configuration: BridgeConfiguration) {
        self.init(configured: configuration.gateways.map { ($0.name, $0.format.rawValue) })
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
        guard heardCount < Self.maximumHeardGateways else { return false }
        heardCount += 1
        configured[index].heard[name] = Heard(state: "online", lastSeen: time)
        return true
    }

    /// Records an online/offline status of gateway `name` (through the entry at `index`);
    /// returns true when its state changed.
    mutating func status(_ name: String, through index: Int, online: Bool, at time: Timestamp) -> Bool {
        guard configured.indices.contains(index) else { return false }
        let state = online ? "online" : "offline"
        if var heard = configured[index].heard[name] {
            guard heard.state != state else { return false }
            heard.state = state
            configured[index].heard[name] = heard
            return true
        }
        guard heardCount < Self.maximumHeardGateways else { return false }
        heardCount += 1
        configured[index].heard[name] = Heard(state: state, lastSeen: online ? time : nil)
        return true
    }

    /// `bridge/gateways`: the configured entries in configuration order, each heard gateway
    /// under the entry whose topic matched it, sorted by name.
    var payload: JSONValue {
        .array(
            configured.map { entry in
                [
                    "name": .string(entry.name),
                    "format": .string(entry.format),
                    "state": .string(entry.state),
                    "last_seen": Self.time(entry.lastSeen),
                    "heard": .array(
                        entry.heard.sorted { $0.key < $1.key }.map { name, heard in
                            [
                                "name": .string(name),
                                "state": .string(heard.state),
                                "last_seen": Self.time(heard.lastSeen),
                            ]
                        }),
                ]
            })
    }

    private static func time(_ timestamp: Timestamp?) -> JSONValue {
        timestamp.map { .string(ISO8601.string($0)) } ?? .null
    }
}
