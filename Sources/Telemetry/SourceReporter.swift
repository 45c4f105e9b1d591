import AccessoryKit

/// What a source device (a Linux desktop) tells the bridge about its own Bluetooth
/// connections: `source_connected` when an accessory the bridge takes sources for becomes
/// connected to it, `source_disconnected` when that stops. Pure: fed what bluetoothctl says
/// and what the bridge publishes (`bridge/accessories`), it returns the changes to send, so
/// `aabridge report-sources` only runs commands and publishes.
///
/// Edges alone would drift from the bridge: it clears an accessory's sources when no gateway
/// hears it for a while, forgets nothing when this reporter was killed without saying
/// goodbye, and restarts with what it stored. So each reconciliation also compares with the
/// bridge's published state (the accessory's primary and secondary source): it says again
/// what the bridge lost, takes back what the bridge still lists but is gone, and does not send
/// what the bridge already lists. A state counts only when received ``settleMilliseconds``
/// after the last message about that accessory: a sooner one may have been published before
/// the bridge handled the message, and one published because the bridge refused it must not
/// be answered with the same message at every poll.
public struct SourceReporter: Sendable {
    /// How long after a message a state that contradicts it is believed.
    public static let settleMilliseconds: Int64 = 2_000

    /// An accessory as the bridge publishes it in `bridge/accessories`.
    public struct Accessory: Hashable, Sendable {
        public var id: BluetoothAddress
        public var name: String
        /// Registered with `audioSwitching` and not invalidated: the bridge takes source
        /// updates for it. Any other accessory would answer every update with an error.
        public var takesSources: Bool
        /// Heard by a gateway lately (`available`).
        public var available: Bool
        /// Its `primary_source` and `secondary_source`, when set.
        public var primarySource: BluetoothAddress?
        public var secondarySource: BluetoothAddress?
        /// Its `alias`: the public address this device's Bluetooth knows it by, when the id is
        /// the rotating address it was paired from.
        public var alias: BluetoothAddress?

        public init(
            id: BluetoothAddress, name: String, takesSources: Bool, available: Bool, primarySource: BluetoothAddress? = nil,
            secondarySource: BluetoothAddress? = nil, alias: BluetoothAddress? = nil
        ) {
            self.id = id
            self.alias = alias
            self.name = name
            self.takesSources = takesSources
            self.available = available
            self.primarySource = primarySource
            self.secondarySource = secondarySource
        }

        /// How a change names it.
        var label: Label { Label(id: id, name: name) }
    }

    /// An accessory named in a change: its id and the name the bridge gave it.
    public struct Label: Hashable, Sendable {
        public var id: BluetoothAddress
        public var name: String

        public init(id: BluetoothAddress, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// One thing to tell the bridge (or, for `forgotten`, to tell the user only).
    public enum Change: Hashable, Sendable {
        /// Newly connected: send `source_connected`.
        case connected(Label)
        /// Still connected, but the bridge lost it (it cleared the accessory's sources while
        /// nobody heard the accessory, or restarted): send `source_connected` again.
        case connectedAgain(Label)
        /// No longer connected: send `source_disconnected`.
        case disconnected(Label)
        /// Not connected, but the bridge still lists this source (a reporter that ended
        /// without saying so, or a message lost): send `source_disconnected`.
        case disconnectedStale(Label)
        /// Reported connected before, but the bridge no longer takes sources for it (removed,
        /// invalidated, registered without `audioSwitching`): nothing can be sent.
        case forgotten(Label)

        public var accessory: Label {
            switch self {
            case .connected(let label), .connectedAgain(let label), .disconnected(let label), .disconnectedStale(let label),
                .forgotten(let label):
                label
            }
        }

        /// The `accessory/<ID>/set` key to publish, nil when nothing is published.
        public var setKey: String? {
            switch self {
            case .connected, .connectedAgain: "source_connected"
            case .disconnected, .disconnectedStale: "source_disconnected"
            case .forgotten: nil
            }
        }
    }

    /// This device's own address: the source reported.
    public let source: BluetoothAddress
    /// The accessories reported connected, and under which name.
    public private(set) var reported: [BluetoothAddress: Label] = [:]
    /// The bridge's accessories as last published, by id; nil before the first publication.
    public private(set) var accessories: [BluetoothAddress: Accessory]?
    /// When the bridge's state was last received, and when a message about each accessory
    /// was last sent (any monotonic clock, the same for both).
    private var stateReceivedAt = Timestamp(milliseconds: 0)
    private var sentAt: [BluetoothAddress: Timestamp] = [:]

    public init(source: BluetoothAddress) {
        self.source = source
    }

    /// The accessories the bridge takes sources for, by id: the only ones ever reported.
    public var watched: [Accessory] {
        (accessories?.values.filter(\.takesSources) ?? []).sorted { $0.id < $1.id }
    }

    /// The addresses bluetoothctl may list for the watched accessories: their ids and aliases.
    public var watchedAddresses: [BluetoothAddress] {
        watched.flatMap { [$0.id] + ($0.alias.map { [$0] } ?? []) }
    }

    /// A new publication of `bridge/accessories`, received at `time`.
    public mutating func bridgePublished(_ accessories: [Accessory], at time: Timestamp) {
        self.accessories = Dictionary(accessories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        stateReceivedAt = time
    }

    /// Compares what is connected now (the addresses bluetoothctl lists) with what was
    /// reported and with the bridge's state, and returns the changes to send, accessories in
    /// address order. An accessory is connected when its id or its alias is listed. Devices
    /// the bridge does not take sources for are ignored.
    public mutating func reconcile(connected: Set<BluetoothAddress>, at now: Timestamp) -> [Change] {
        guard let accessories else { return [] }
        var changes: [Change] = []
        for id in reported.keys.sorted() where accessories[id]?.takesSources != true {
            changes.append(.forgotten(reported.removeValue(forKey: id)!))
            sentAt[id] = nil
        }
        for accessory in watched {
            let id = accessory.id
            let listed = accessory.primarySource == source || accessory.secondarySource == source
            // Only a state received well after the last message about it shows that message's effect.
            let settled = sentAt[id].map { stateReceivedAt.milliseconds(since: $0) >= Self.settleMilliseconds } ?? true
            let change: Change?
            let isConnected = connected.contains(id) || accessory.alias.map(connected.contains) == true
            switch (isConnected, reported[id] != nil) {
            case (true, false):
                reported[id] = accessory.label
                // What the bridge already lists needs no message (a second `--once`, a restart),
                // unless that state may predate the last message (a quick reconnection).
                change = listed && settled ? nil : .connected(accessory.label)
            case (true, true):
                // The bridge lists two sources at most: with both slots taken by others it
                // cannot show whether it still has this one, so nothing is said again.
                let room = accessory.primarySource == nil || accessory.secondarySource == nil
                change = settled && accessory.available && !listed && room ? .connectedAgain(accessory.label) : nil
            case (false, true):
                reported[id] = nil
                change = .disconnected(accessory.label)
            case (false, false):
                change = settled && listed ? .disconnectedStale(accessory.label) : nil
            }
            guard let change else { continue }
            sentAt[id] = now
            changes.append(change)
        }
        return changes
    }

    /// Everything reported connected, now said disconnected (the reporter is stopping).
    public mutating func disconnectAll() -> [Change] {
        let changes: [Change] = reported.keys.sorted().map { id in
            let label = reported[id]!
            return accessories?[id]?.takesSources == true ? .disconnected(label) : .forgotten(label)
        }
        reported = [:]
        return changes
    }
}
