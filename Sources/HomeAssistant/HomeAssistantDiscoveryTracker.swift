import AccessoryKit
import JSON

/// Remembers what discovery was published per accessory, so the runtime can hand it every
/// status change and publish only the ones that change the discovery payload.
///
/// Battery sensors are sticky: a part once seen keeps its entity even while a status has no
/// decoded level for it (an advertisement without battery data must not delete the entity).
///
/// The runtime's use:
/// - after each (re)connect and after `discovery.republishDelay(using:)` following Home
///   Assistant's birth message: publish every message of `everything(_:)`, retained;
/// - on `accessoryChanged(status)`: publish `changed(status)` when it is not nil, retained;
/// - on `accessoryRemoved(id)`: publish an empty retained payload to `removed(id)`.
public struct HomeAssistantDiscoveryTracker: Sendable {
    public private(set) var discovery: HomeAssistantDiscovery
    /// A digest of the key each accessory's discovery was last published with (its
    /// `hashValue`: SipHash with this process's random seed), not the key: the key, its name,
    /// product, model and option lists, took 150-290 bytes per accessory (issue 53), the digest
    /// 8. A collision (a changed key whose digest is the one published: 2^-64 per change, and
    /// not to be forced from outside, the seed being random) would leave one accessory's
    /// discovery out of date until its next change, a reconnect or Home Assistant's birth,
    /// which republish everything.
    private var published: [BluetoothAddress: Int] = [:]
    /// The battery parts seen per accessory; none is not kept.
    private var batteryParts: [BluetoothAddress: Set<HomeAssistantBatteryPart>] = [:]
    /// The picker's candidates in the bridge device's last discovery (its "Candidate" options).
    private var candidates: [HomeAssistantCandidate] = []
    /// The heard gateways in the bridge device's last discovery (one sensor each).
    private var gateways: [HomeAssistantGateway] = []

    /// Creates a tracker that has published nothing yet.
    public init(discovery: HomeAssistantDiscovery) {
        self.discovery = discovery
    }

    /// The accessory's discovery message when it differs from the one last published (or
    /// none was), else nil.
    public mutating func changed(_ status: AccessoryStatus) -> (topic: String, payload: JSONValue)? {
        let (key, parts) = record(status)
        let digest = key.hashValue
        guard published[status.accessory.id] != digest else { return nil }
        published[status.accessory.id] = digest
        return discovery.accessoryDevice(status, batteryParts: parts)
    }

    /// The bridge's device and every accessory's, whatever was published before: the
    /// broker or Home Assistant may have lost them.
    public mutating func everything(_ statuses: [AccessoryStatus]) -> [(topic: String, payload: JSONValue)] {
        var messages = [discovery.bridgeDevice(candidates: candidates, gateways: gateways)]
        for status in statuses {
            let (key, parts) = record(status)
            published[status.accessory.id] = key.hashValue
            messages.append(discovery.accessoryDevice(status, batteryParts: parts))
        }
        return messages
    }

    /// The bridge device's discovery when the picker's candidates (ids and names) differ from
    /// the ones it was last published with, else nil: Home Assistant's select knows only the
    /// options its discovery lists.
    public mutating func candidatesChanged(_ candidates: [HomeAssistantCandidate]) -> (topic: String, payload: JSONValue)? {
        guard candidates != self.candidates else { return nil }
        self.candidates = candidates
        return discovery.bridgeDevice(candidates: candidates, gateways: gateways)
    }

    /// The bridge device's discovery when the heard gateways differ from the ones it was last
    /// published with (a gateway heard for the first time gets its sensor), else nil.
    public mutating func gatewaysChanged(_ gateways: [HomeAssistantGateway]) -> (topic: String, payload: JSONValue)? {
        guard gateways != self.gateways else { return nil }
        self.gateways = gateways
        return discovery.bridgeDevice(candidates: candidates, gateways: gateways)
    }

    /// The source devices' names changed (`source/name`): the discovery of every accessory
    /// whose "Home source" options change with them.
    public mutating func sourceNamesChanged(
        _ names: [BluetoothAddress: String], statuses: [AccessoryStatus]
    ) -> [(topic: String, payload: JSONValue)] {
        guard names != discovery.sourceNames else { return [] }
        discovery.sourceNames = names
        return statuses.filter { published[$0.accessory.id] != nil }.compactMap { changed($0) }
    }

    /// The look-alikes the away accessories could be changed (`bridge/lookalikes`): the
    /// discovery of every accessory whose "Look-alike" options change with them.
    public mutating func lookalikesChanged(
        _ lookalikes: [BluetoothAddress: [BluetoothAddress]], statuses: [AccessoryStatus]
    ) -> [(topic: String, payload: JSONValue)] {
        guard lookalikes != discovery.lookalikes else { return [] }
        discovery.lookalikes = lookalikes
        return statuses.filter { published[$0.accessory.id] != nil }.compactMap { changed($0) }
    }

    /// Forgets the accessory; returns the topic to clear with an empty retained payload.
    public mutating func removed(_ id: BluetoothAddress) -> String {
        published[id] = nil
        batteryParts[id] = nil
        return discovery.removal(of: id)
    }

    /// The key with the sticky battery parts, after adding the status's parts to them.
    private mutating func record(_ status: AccessoryStatus) -> (HomeAssistantDiscoveryKey, Set<HomeAssistantBatteryPart>) {
        var key = discovery.discoveryKey(status)
        let parts = batteryParts[status.accessory.id, default: []].union(key.batteryParts)
        if !parts.isEmpty { batteryParts[status.accessory.id] = parts }
        key.batteryParts = parts
        return (key, parts)
    }
}
