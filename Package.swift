// swift-tools-version:6.0
// aabridge: Bluetooth audio accessories (AudioAccessoryKit / AccessorySetupKit model) to the smart home over MQTT.
import PackageDescription

let package = Package(
    name: "aabridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "aabridge", targets: ["aabridge"]),
        .executable(name: "aabridge-bench", targets: ["aabridge-bench"]),
        .library(name: "AccessoryKit", targets: ["AccessoryKit"]),
        .library(name: "Telemetry", targets: ["Telemetry"]),
        .library(name: "MQTT", targets: ["MQTT"]),
    ],
    targets: [
        // Debian's C libraries, reached through pkg-config; `.apt` names the package that provides each.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // libmicrohttpd's header: the HTTP console (http.listen). Not linked: HTTPServer opens
        // libmicrohttpd.so.12 (Debian's libmicrohttpd12) when the first server starts.
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        // libpq's header: the PostgreSQL storage backend (storage.backend: postgresql). Not linked:
        // Storage opens libpq.so.5 (Debian's libpq5) when a PostgreSQL connection string is read.
        .systemLibrary(name: "CPostgres", providers: [.apt(["libpq-dev"])]),
        // BlueZ's socket headers only (AF_BLUETOOTH, sockaddr_l2): nothing is linked.
        .systemLibrary(name: "CBluetooth", providers: [.apt(["libbluetooth-dev"])]),
        // libsystemd's sd-bus header: the bluez gateway's D-Bus client (Sources/BlueZ). Not linked:
        // BlueZ opens libsystemd.so.0 (Debian's libsystemd0) when a bluez gateway starts.
        .systemLibrary(name: "CSystemd", providers: [.apt(["libsystemd-dev"])]),

        .target(name: "AccessoryKit"),
        .target(name: "Telemetry", dependencies: ["CCrypto", "AccessoryKit"]),
        .target(name: "MQTT", dependencies: ["CMosquitto"]),
        .target(name: "JSON"),
        // Apple's accessory protocol over BlueZ's L2CAP sockets: reads AirPods' proximity keys.
        .target(name: "AccessoryLink", dependencies: ["CBluetooth"]),
        // The console's, metrics' and health check's HTTP server (libmicrohttpd): requests in, responses out, nothing of the bridge.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // The box's own adapter: BlueZ over D-Bus (sd-bus) on a thread of its own, advertisements out.
        .target(name: "BlueZ", dependencies: ["CSystemd", "AccessoryKit", "Telemetry"]),
        .target(name: "Storage", dependencies: ["CSQLite", "CPostgres", "AccessoryKit", "JSON"]),
        // The YAML file, its checks and the values the runtime runs from (with the topic map).
        // Storage for libpq's reading of storage.url (checked and redacted as the store will read it).
        .target(name: "Configuration", dependencies: ["AccessoryKit", "Telemetry", "JSON", "CYAML", "MQTT", "Storage"]),
        // Home Assistant's MQTT discovery payloads: pure values, published by the runtime.
        .target(name: "HomeAssistant", dependencies: ["AccessoryKit", "Configuration", "JSON"]),
        // The runtime: MQTT in and out, the engine, storage, discovery.
        .target(
            name: "Bridge",
            dependencies: [
                "AccessoryKit", "Telemetry", "MQTT", "Storage", "JSON", "Configuration", "HomeAssistant", "HTTPServer", "BlueZ",
            ]),
        .executableTarget(
            name: "aabridge",
            dependencies: [
                "AccessoryKit", "AccessoryLink", "Bridge", "Configuration", "JSON", "LocalProcess", "MQTT", "Storage", "Telemetry",
            ]),
        .executableTarget(
            name: "aabridge-bench",
            dependencies: ["AccessoryKit", "Telemetry", "MQTT", "Storage", "JSON", "Configuration", "Bridge", "LocalProcess"]),

        // For the tests only: a real mosquitto on a free loopback port, child processes, repository files.
        // Child processes (posix_spawn/waitpid) and free loopback ports: the brokers and bridges
        // the tests and the benchmarks start, and the tools `report-sources` runs.
        .target(name: "LocalProcess"),
        .target(name: "TestSupport", dependencies: ["MQTT", "LocalProcess"], path: "Tests/TestSupport"),
        // Two layers (docs/testing.md): the unit layer, which starts no process and opens no socket
        // (scripts/test --quick; scripts/lib/test-layers.bash lists its targets: the *UnitTests
        // targets and the wholly pure AccessoryKitTests, TelemetryTests, JSONTests and
        // ConfigurationTests), and the integration layer, every other test target.
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "AccessoryKitTests", dependencies: ["AccessoryKit", "TestSupport"]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "AccessoryKit", "TestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "LocalProcess", "TestSupport"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "LocalProcess", "TestSupport"]),
        .testTarget(name: "MQTTUnitTests", dependencies: ["MQTT", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "AccessoryLinkTests", dependencies: ["AccessoryLink"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "JSON", "TestSupport"]),
        // Bridge for `Payloads`: the templates are rendered against the state the runtime publishes.
        .testTarget(
            name: "HomeAssistantTests", dependencies: ["HomeAssistant", "Configuration", "JSON", "Bridge", "LocalProcess", "TestSupport"]),
        .testTarget(
            name: "BridgeTests",
            dependencies: ["Bridge", "Configuration", "HomeAssistant", "HTTPServer", "JSON", "LocalProcess", "TestSupport"]),
        .testTarget(
            name: "BridgeUnitTests", dependencies: ["Bridge", "AccessoryKit", "Configuration", "HTTPServer", "JSON", "Telemetry"]),
    ]
)

// One place for the settings every Swift target shares (as swift-log and hummingbird do).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
