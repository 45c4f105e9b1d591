import AccessoryKit

/// Every topic of the MQTT contract (mqtt-api.md), derived from `mqtt.base_topic`.
/// IDs in topics are 12 upper-case hex digits (`A1B2C3D4E5F6`), never a name: a name with
/// `+`, `#` or `/` can therefore never become a topic level.
public struct Topics: Sendable, Hashable {
    public let base: String

    /// `<base>/bridge/request/`, kept: it is looked for in every incoming API topic.
    public let requestPrefix: String
    /// `<base>/accessory/`, kept for the same reason.
    let accessoryPrefix: String

    public init(base: String) {
        self.base = base
        requestPrefix = "\(base)/bridge/request/"
        accessoryPrefix = "\(base)/accessory/"
    }

    public var bridgeState: String { "\(base)/bridge/state" }
    public var bridgeInfo: String { "\(base)/bridge/info" }
    public var bridgeHealth: String { "\(base)/bridge/health" }
    public var bridgeAccessories: String { "\(base)/bridge/accessories" }
    public var bridgeGateways: String { "\(base)/bridge/gateways" }
    /// Addresses that could be accessories found again after a night (household.md).
    public var bridgeLookalikes: String { "\(base)/bridge/lookalikes" }
    public var bridgePicker: String { "\(base)/bridge/picker" }
    public var bridgeEvent: String { "\(base)/bridge/event" }
    public var bridgeLog: String { "\(base)/bridge/log" }
    /// The pairing form's state (retained): the chosen candidate and the name to give.
    public var bridgePairing: String { "\(base)/bridge/pairing" }
    /// Where the pairing form is filled in and submitted (`{"candidate"}`, `{"name"}`, `{"action":"pair"}`).
    public var bridgePairingSet: String { "\(base)/bridge/pairing/set" }
    /// Where the re-attach form is filled in and submitted (`{"id","lookalike"}`, `{"id","action":"reattach"}`).
    public var bridgeReattachSet: String { "\(base)/bridge/reattach/set" }
    /// The outcome of the last request (retained), for a sensor that shows a failed press.
    public var bridgeLastResponse: String { "\(base)/bridge/last_response" }
    /// A cluster instance's state (retained): its partitions and accessories (docs/scaling.md).
    public func bridgeInstance(_ instance: String) -> String { "\(base)/bridge/instances/\(instance)" }
    /// The filter the bridge subscribes to for requests.
    public var requestFilter: String { "\(base)/bridge/request/#" }
    public func response(_ name: String) -> String { "\(base)/bridge/response/\(name)" }
    /// Where a request is sent.
    public func request(_ name: RequestName) -> String { requestPrefix + name.name }
    /// Where a request is answered.
    public func response(_ name: RequestName) -> String { response(name.name) }

    public func accessory(_ id: BluetoothAddress) -> String { "\(base)/accessory/\(id.topicID)" }
    public func availability(_ id: BluetoothAddress) -> String { "\(accessory(id))/availability" }
    /// The re-attach form's choice for the accessory (retained): `{"lookalike"}`.
    public func reattachChoice(_ id: BluetoothAddress) -> String { "\(accessory(id))/reattach" }
    public func decision(_ id: BluetoothAddress) -> String { "\(accessory(id))/decision" }
    public func error(_ id: BluetoothAddress) -> String { "\(accessory(id))/error" }
    /// The accessory's head-tracking sensor frames, for a spatial audio renderer (QoS 0).
    public func imu(_ id: BluetoothAddress) -> String { "\(accessory(id))/imu" }
    /// The filter for the extension role's `accessory/<ID>/set` topics.
    public var setFilter: String { "\(base)/accessory/+/set" }
    public func sourceRoute(_ source: BluetoothAddress) -> String { "\(base)/source/\(source.topicID)/route" }

    /// The accessory ID in `<base>/accessory/<ID>/set`, if the topic is one.
    public func accessoryID(inSetTopic topic: String) -> Substring? {
        let prefix = accessoryPrefix
        guard topic.hasPrefix(prefix), topic.hasSuffix("/set") else { return nil }
        let id = topic.dropFirst(prefix.count).dropLast(4)
        return id.contains("/") ? nil : id
    }

    /// The filter of every accessory's state topic, `<base>/accessory/+` (a cluster's
    /// `bridge/accessories` lists what all instances published there).
    public var accessoryStateFilter: String { "\(base)/accessory/+" }

    /// The accessory of a state topic, `<base>/accessory/<ID>`, if the topic is one.
    public func accessoryID(inStateTopic topic: String) -> BluetoothAddress? {
        guard topic.hasPrefix(accessoryPrefix) else { return nil }
        return BluetoothAddress(topic.dropFirst(accessoryPrefix.count))
    }

    /// The filter of every source's route topic, `<base>/source/+/route` (a cluster instance
    /// takes over the routes of the accessories it takes over).
    public var sourceRouteFilter: String { "\(base)/source/+/route" }

    /// The source of a route topic, `<base>/source/<ID>/route`, if the topic is one.
    public func sourceID(inRouteTopic topic: String) -> BluetoothAddress? {
        let prefix = "\(base)/source/"
        guard topic.hasPrefix(prefix), topic.hasSuffix("/route") else { return nil }
        return BluetoothAddress(topic.dropFirst(prefix.count).dropLast("/route".count))
    }

    /// The request name in `<base>/bridge/request/<name>`, if the topic is one.
    public func requestName(in topic: String) -> String? {
        guard topic.hasPrefix(requestPrefix) else { return nil }
        let name = topic.dropFirst(requestPrefix.count)
        return name.isEmpty ? nil : String(name)
    }
}
