import AccessoryKit
import JSON

/// The gateways seen on MQTT (`bridge/gateways`): name from the topic, format from the
/// configuration entry that matched, state from LWT/status messages. Bounded, so a flood of
/// invented gateway names cannot grow it without limit.
struct GatewayTracker {
    struct Entry {
        var format: String
        var state: String
        var lastSeen: Timestamp?
    }

    static let maximumGateways = 256
    private(set) var entries: [String: Entry] = [:]

    /// Records traffic from a gateway; returns true when the list changed shape (new gateway).
    mutating func seen(_ name: String, format: String, at time: Timestamp) -> Bool {
        if var entry = entries[name] {
            entry.lastSeen = time
            if entry.state == "unknown" { entry.state = "online" }
            let changed = entries[name]?.state != entry.state
            entries[name] = entry
            return changed
        }
        guard entries.count < Self.maximumGateways else { return false }
        entries[name] = Entry(format: format, state: "online", lastSeen: time)
        return true
    }

    /// Records an online/offline status; returns true when the state changed.
    mutating func status(_ name: String, format: String, online: Bool, at time: Timestamp) -> Bool {
        let state = online ? "online" : "offline"
        if var entry = entries[name] {
            guard entry.state != state else { return false }
            entry.state = state
            entries[name] = entry
            return true
        }
        guard entries.count < Self.maximumGateways else { return false }
        entries[name] = Entry(format: format, state: state, lastSeen: online ? time : nil)
        return true
    }

    var payload: JSONValue {
        .array(
            entries.sorted { $0.key < $1.key }.map { name, entry in
                [
                    "name": .string(name),
                    "format": .string(entry.format),
                    "state": .string(entry.state),
                    "last_seen": entry.lastSeen.map { .string(ISO8601.string($0)) } ?? .null,
                ]
            })
    }
}
