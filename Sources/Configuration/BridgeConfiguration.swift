import AccessoryKit

/// The whole validated configuration file; every key has its documented default.
///
/// Built by `ConfigurationLoader`, which checks every rule before a value of this
/// type exists, so the runtime can use it without further checks.
public struct BridgeConfiguration: Hashable, Sendable, CustomStringConvertible {
    public var mqtt: MQTTSection
    public var homeAssistant: HomeAssistantConfiguration
    public var storage: StorageConfiguration
    public var health: HealthConfiguration
    public var log: LogConfiguration
    /// The `setup:` section, the Info.plist analog.
    public var setup: SetupDeclaration
    public var products: [ProductConfiguration]
    public var gateways: [GatewayConfiguration]
    public var accessories: [AccessoryConfiguration]
    public var sources: [SourceConfiguration]
    /// The `rooms:` section: room names for heard node (gateway) names, as people name their
    /// rooms in Home Assistant. Unmapped nodes keep their name.
    public var rooms: [String: String]
    public var switching: SwitchingSettings
    public var identity: IdentityConfiguration
    /// The `http:` section: console, metrics, health check.
    public var http: HTTPConfiguration
    /// The `cluster:` section: several bridges on one PostgreSQL database.
    public var cluster: ClusterConfiguration
    /// What loads but cannot work as expected (a product whose placement nothing reports, an
    /// Apple descriptor narrower than the model catalogue, ...), with key paths: `validate`
    /// prints them and `run` logs them; none stops the bridge.
    public var warnings: [ConfigurationIssue] = []
    /// The system bus a `bluez` gateway reaches BlueZ on: `DBUS_SYSTEM_BUS_ADDRESS` from the
    /// environment the file was loaded with, nil for the system's own socket. Taken with the
    /// file rather than by libsystemd from the process so that a bridge in a test reaches
    /// the test's private bus.
    public var systemBusAddress: String?

    /// The defaults, as an empty file gives them.
    /// - Parameter hostname: for the default client id `aabridge-<hostname>`.
    public init(hostname: String) {
        self.mqtt = MQTTSection(hostname: hostname)
        self.homeAssistant = HomeAssistantConfiguration()
        self.storage = StorageConfiguration()
        self.health = HealthConfiguration()
        self.log = LogConfiguration()
        self.setup = SetupDeclaration(supports: [.bluetooth])
        self.products = []
        self.gateways = []
        self.accessories = []
        self.sources = []
        self.rooms = [:]
        self.switching = SwitchingSettings()
        self.identity = IdentityConfiguration()
        self.http = HTTPConfiguration()
        self.cluster = ClusterConfiguration(hostname: hostname)
    }

    /// What the engine takes: products, declaration, switching, migrations and the keys.
    public var engine: EngineConfiguration {
        EngineConfiguration(
            products: products.map(\.product), declaration: setup, switching: switching,
            migrations: accessories.map(\.migration),
            keys: Dictionary(
                accessories.filter { !$0.keys.isEmpty }.map { ($0.migration.id, $0.keys) }, uniquingKeysWith: { first, _ in first }),
            sourceNames: Dictionary(sources.map { ($0.address, $0.name) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The product entry with this name.
    public func product(named name: String) -> ProductConfiguration? {
        products.first { $0.name == name }
    }

    /// A one-line overview without secrets (the MQTT section redacts its password).
    public var description: String {
        "BridgeConfiguration(mqtt: \(mqtt), products: \(products.map(\.name)), gateways: \(gateways.map(\.name)), "
            + "accessories: \(accessories.count), sources: \(sources.count))"
    }
}
