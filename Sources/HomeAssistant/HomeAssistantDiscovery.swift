import AccessoryKit
import Configuration
import JSON

/// Home Assistant's device-based MQTT discovery for aabridge (mqtt-api.md, "Home Assistant").
///
/// Pure values, no MQTT I/O: the runtime publishes what this returns, retained.
/// - `bridgeDevice()` and one `accessoryDevice(_:)` per accessory, on connect and whenever
///   Home Assistant's status topic says `online` (after `republishDelay(using:)`);
/// - `accessoryDevice(_:)` again when `discoveryKey(_:)` of an accessory changes (rename,
///   registration with other capabilities, a battery first decoded);
/// - an empty retained payload on `removal(of:)` when an accessory is removed.
/// `HomeAssistantDiscoveryTracker` does the bookkeeping of the last two for the runtime.
///
/// Every entity reads the retained state topics of the MQTT contract with a value template,
/// so discovery never carries state and needs no republish when state changes.
/// Keys are Home Assistant's full names throughout (no abbreviations).
public struct HomeAssistantDiscovery: Sendable {
    /// The discovery prefix (`homeassistant.discovery_prefix`).
    public var discoveryPrefix: String
    /// Home Assistant's birth/last-will topic (`homeassistant.status_topic`).
    public var statusTopic: String
    /// The bridge's topics (`mqtt.base_topic`).
    public var topics: Topics
    /// The configured products, for model, manufacturer and capabilities.
    public var products: [String: Product]
    /// The configured sources (`sources:`), in order.
    public var sources: [SourceConfiguration]
    /// Every named source device: the configuration's names and those given at run time
    /// (`source/name`; the configuration's win). The options of an accessory's "Home source"
    /// select, by name; the runtime keeps it current (``HomeAssistantDiscoveryTracker``).
    public var sourceNames: [BluetoothAddress: String]
    /// The look-alikes each away accessory could be (`bridge/lookalikes`' `could_be` read
    /// backwards, by address): the options of its "Look-alike" select; the runtime keeps it
    /// current (``HomeAssistantDiscoveryTracker``).
    public var lookalikes: [BluetoothAddress: [BluetoothAddress]] = [:]
    /// `rooms:`: room names for heard node names. The state topics carry the node's name (the
    /// contract's `room` and `gateway`); the Room sensor and the presence tracker show this name.
    public var rooms: [String: String]
    /// `homeassistant.picker_timeout_s`: how long the Show picker button presents the picker.
    public var pickerTimeoutSeconds: Int
    /// `origin.support_url`; omitted when nil.
    public var supportURL: String?
    /// `origin.sw_version` and the bridge device's `sw_version`.
    public var version: String

    /// Creates discovery from its parts.
    public init(
        discoveryPrefix: String = "homeassistant", statusTopic: String = "homeassistant/status", baseTopic: String,
        products: [Product] = [], sources: [SourceConfiguration] = [], rooms: [String: String] = [:],
        pickerTimeoutSeconds: Int = HomeAssistantConfiguration.defaultPickerTimeoutSeconds, supportURL: String? = nil,
        version: String
    ) {
        self.discoveryPrefix = discoveryPrefix
        self.statusTopic = statusTopic
        self.topics = Topics(base: baseTopic)
        // The first entry wins, as `BridgeConfiguration.product(named:)` does.
        self.products = Dictionary(products.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.sources = sources
        self.sourceNames = Dictionary(sources.map { ($0.address, $0.name) }, uniquingKeysWith: { first, _ in first })
        self.rooms = rooms
        self.pickerTimeoutSeconds = pickerTimeoutSeconds
        self.supportURL = supportURL
        self.version = version
    }

    /// Creates discovery from the loaded configuration (`homeassistant:`, `mqtt.base_topic`, `products:`).
    public init(configuration: BridgeConfiguration, version: String) {
        self.init(
            discoveryPrefix: configuration.homeAssistant.discoveryPrefix,
            statusTopic: configuration.homeAssistant.statusTopic, baseTopic: configuration.mqtt.baseTopic,
            products: configuration.products.map(\.product), sources: configuration.sources, rooms: configuration.rooms,
            pickerTimeoutSeconds: configuration.homeAssistant.pickerTimeoutSeconds, version: version)
    }

    /// A select's "nothing chosen" option. Not `none`: Home Assistant's MQTT select takes a
    /// state of `none` (any case) as "no option" and shows the entity unknown, so the option
    /// could never be shown as chosen.
    public static let noOption = "(none)"

    // MARK: - Ids

    /// `aabridge_bridge_<base topic>`, with every character outside `[A-Za-z0-9_-]` as `_`.
    /// Keyed by the base topic so two bridges on one broker get two devices.
    public var bridgeObjectID: String { "aabridge_bridge_" + Self.sanitized(topics.base) }

    /// `aabridge_<12 hex>`: from the address only, so it survives restarts and renames.
    public func objectID(of id: BluetoothAddress) -> String { "aabridge_\(id.topicID)" }

    /// `<prefix>/device/<object id>/config`.
    public func configTopic(objectID: String) -> String { "\(discoveryPrefix)/device/\(objectID)/config" }

    /// The topic to clear with an empty retained payload when the accessory is removed;
    /// Home Assistant then deletes the device and its entities.
    public func removal(of id: BluetoothAddress) -> String { configTopic(objectID: objectID(of: id)) }

    /// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_` (the only
    /// characters Home Assistant allows in an object id).
    static func sanitized(_ text: String) -> String {
        let allowed = text.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": Character(scalar)
            default: "_"
            }
        }
        return allowed.isEmpty ? "_" : String(allowed)
    }

    // MARK: - Republish decisions

    /// What an accessory's discovery payload depends on; republish when it changes.
    public func discoveryKey(_ status: AccessoryStatus) -> HomeAssistantDiscoveryKey {
        HomeAssistantDiscoveryKey(
            id: status.accessory.id, name: status.accessory.displayName, product: status.accessory.product,
            capabilities: capabilities(of: status), batteryParts: HomeAssistantBatteryPart.present(in: status.battery),
            model: status.model, homeSourceOptions: homeSourceOptions(status).map(\.address),
            lookalikeOptions: lookalikes[status.accessory.id] ?? [])
    }

    /// Whether a message on `statusTopic` is Home Assistant's birth message (`online`).
    public func isBirthMessage(_ payload: [UInt8]) -> Bool {
        // Home Assistant sends `online` as plain text; tolerate case and surrounding whitespace.
        let text = String(decoding: payload, as: UTF8.self).lowercased()
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) == ["online"]
    }

    /// How long to wait after Home Assistant's birth message before republishing: a random
    /// 1–5 s, so Home Assistant has finished starting up and several bridges (and other
    /// integrations) do not all publish in the same instant.
    public func republishDelay(using generator: inout some RandomNumberGenerator) -> Duration {
        .milliseconds(Int.random(in: Self.republishDelayMilliseconds, using: &generator))
    }

    /// The range of `republishDelay(using:)`, in milliseconds.
    public static let republishDelayMilliseconds = 1000...5000

    // MARK: - Messages

    /// The bridge's device and every accessory's, in order: what to publish after a
    /// (re)connect and after Home Assistant's birth message.
    public func allDevices(_ statuses: [AccessoryStatus]) -> [(topic: String, payload: JSONValue)] {
        [bridgeDevice()] + statuses.map { accessoryDevice($0) }
    }

    /// The components' capabilities: the registered ones, or the product's hardware
    /// capabilities before registration (so entities exist from pairing on).
    func capabilities(of status: AccessoryStatus) -> AccessoryControlDevice.Capabilities {
        status.registration?.configuration.deviceCapabilities ?? products[status.accessory.product]?.capabilities ?? []
    }

    /// `origin`: who publishes the discovery (shown in Home Assistant's MQTT info).
    var origin: JSONValue {
        var pairs: [(String, JSONValue)] = [("name", "aabridge"), ("sw_version", .string(version))]
        if let supportURL { pairs.append(("support_url", .string(supportURL))) }
        return .object(pairs)
    }
}
