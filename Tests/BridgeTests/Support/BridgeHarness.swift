import AccessoryKit
import Configuration
import Foundation
import JSON
import MQTT
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Bridge

/// Addresses and names shared by the end-to-end tests (they match ``BridgeHarness/yaml``).
enum Fixture {
    /// Migrated AirPods Pro: the product auto-registers, so it is registered from the start.
    static let airPods = "A1:B2:C3:D4:E5:F6"
    static let airPodsTopic = "A1B2C3D4E5F6"
    /// Migrated Acme Studio Headphones: full capabilities, not registered.
    static let headphones = "B1:B2:C3:D4:E5:F6"
    static let headphonesTopic = "B1B2C3D4E5F6"
    /// Migrated Acme Speaker: a product with `audioSwitching` only, not registered.
    static let speaker = "C1:B2:C3:D4:E5:F6"
    static let speakerTopic = "C1B2C3D4E5F6"
    static let phone = "11:22:33:44:55:66"
    static let phoneTopic = "112233445566"
    static let laptop = "66:55:44:33:22:11"

    /// A real Apple proximity-pairing advertisement (AirPods Pro) from Tests/Fixtures/gateway-payloads.jsonl.
    static let advertisementTopic = "home/gw1/BTtoMQTT/F1E2D3C4B5A6"
    static let advertisementID = "F1:E2:D3:C4:B5:A6"
    static let advertisementPayload =
        #"{"id":"F1:E2:D3:C4:B5:A6","mac_type":1,"manufacturerdata":"4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8","rssi":-55}"#

    /// The line of the fixtures file whose topic is `topic`.
    static func gatewayPayload(topic: String) throws -> String {
        let url = Repository.root.appendingPathComponent("Tests/Fixtures/gateway-payloads.jsonl")
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let value = try JSONParser.parse(String(line))
            if value["topic"]?.stringValue == topic, let payload = value["payload"]?.stringValue { return payload }
        }
        throw BrokerError("no fixture for \(topic)")
    }
}

/// An observer on the test broker: a plain MQTT client subscribed to `aabridge/#` (and
/// whatever else), that publishes as `mosquitto_pub` would.
final class Observer: Sendable {
    let client: MQTTClient
    let messages: StreamCollector<MQTTMessage>
    private let counter = Atomic<Int>(0)

    init(
        broker: MosquittoBroker, user: String? = nil, password: String? = nil,
        subscribe filters: [String] = ["aabridge/#"]
    ) async throws {
        var configuration = MQTTConfiguration(
            host: "127.0.0.1", port: broker.port,
            clientID: "observer-\(UUID().uuidString.prefix(8))", keepalive: 10,
            protocolVersion: .v5,
            reconnect: ReconnectBackoff(minimum: .milliseconds(50), maximum: .milliseconds(300)))
        configuration.username = user
        configuration.password = password
        client = try MQTTClient(configuration: configuration)
        messages = StreamCollector(client.messages)
        try await client.connect()
        for filter in filters { try await client.subscribe(filter, qos: .atLeastOnce) }
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) async throws {
        try await client.publishAcknowledged(topic: topic, string: payload, qos: .atLeastOnce, retain: retain)
    }

    /// Every message on `topic` so far, parsed (an unparsable or empty payload is `.null`).
    func json(on topic: String) -> [JSONValue] {
        messages.elements.filter { $0.topic == topic }.map { (try? JSONParser.parse($0.payload)) ?? .null }
    }

    func messages(on topic: String) -> [MQTTMessage] { messages.elements.filter { $0.topic == topic } }

    /// Waits for a message on `topic` whose JSON satisfies `condition`, and returns it.
    @discardableResult
    /// - Parameter after: how many messages on `topic` to pass over first (one already seen
    ///   that would match, a retained one from the start, is not the one waited for).
    func waitFor(
        _ topic: String, after: Int = 0, timeout: Duration = .seconds(20),
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @escaping (JSONValue) -> Bool = { _ in true }
    ) async -> JSONValue? {
        let found = await messages.wait(timeout: timeout) { elements in
            elements.lazy.filter { $0.topic == topic }.dropFirst(after).contains { condition((try? JSONParser.parse($0.payload)) ?? .null) }
        }
        guard found else {
            Issue.record(
                "no matching message on \(topic); got: \(messages(on: topic).map(\.payloadString))",
                sourceLocation: sourceLocation)
            return nil
        }
        return json(on: topic).dropFirst(after).last(where: condition)
    }

    /// Events on `bridge/event` so far, by type name.
    var eventTypes: [String] { json(on: "aabridge/bridge/event").compactMap { $0["type"]?.stringValue } }

    /// Publishes a request and waits for its response (matched by a unique transaction).
    /// `payload` is the JSON object's members without braces, e.g. `"id":"A1:..."`.
    func request(
        _ name: String, _ members: String = "", timeout: Duration = .seconds(20),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let transaction = "t\(counter.add(1, ordering: .relaxed).newValue)-\(UUID().uuidString.prefix(6))"
        let body = members.isEmpty ? #"{"transaction":"\#(transaction)"}"# : #"{\#(members),"transaction":"\#(transaction)"}"#
        try await publish("aabridge/bridge/request/\(name)", body)
        let response = await waitFor("aabridge/bridge/response/\(name)", timeout: timeout, sourceLocation: sourceLocation) {
            $0["transaction"]?.stringValue == transaction
        }
        guard let response else { throw BrokerError("no response to \(name)") }
        return response
    }

    func disconnect() async { await client.disconnect() }
}

/// One bridge runtime (in this process) against a test broker, with its own database.
final class BridgeHarness {
    let broker: MosquittoBroker
    let directory: URL
    let configuration: BridgeConfiguration
    let yaml: String
    let runner: RuntimeRunner

    var databasePath: String { directory.appendingPathComponent("aabridge.sqlite3").path }

    /// - Parameters:
    ///   - broker: the test broker (a new one when nil).
    ///   - directory: where the database lives (a new temporary directory when nil).
    ///   - server: where the bridge connects (the broker when nil; a ``TCPProxy`` in front of it).
    ///   - mqttExtra: extra lines for the `mqtt:` section (credentials).
    ///   - debounceMilliseconds: `switching.placement_debounce_ms`.
    init(
        broker: MosquittoBroker? = nil, directory: URL? = nil, server: String? = nil, mqttExtra: String = "",
        debounceMilliseconds: Int = 0, availabilityTimeoutSeconds: Int = 120, healthIntervalSeconds: Int = 60,
        homeAssistant: Bool = false, headphonesIRK: String? = nil, follow: Bool = true, identityExtra: String = "",
        extraProducts: String = "", extraAccessories: String = "", bluezBus: String? = nil, bluezExtra: String = ""
    ) throws {
        self.broker = try broker ?? MosquittoBroker()
        if let directory {
            self.directory = directory
        } else {
            self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-e2e-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        }
        var text = Self.yaml(
            server: server ?? self.broker.url, database: self.directory.appendingPathComponent("aabridge.sqlite3").path,
            mqttExtra: mqttExtra, debounce: debounceMilliseconds, availability: availabilityTimeoutSeconds,
            health: healthIntervalSeconds, homeAssistant: homeAssistant, headphonesIRK: headphonesIRK, follow: follow,
            identityExtra: identityExtra, extraProducts: extraProducts, extraAccessories: extraAccessories)
        var environment: [String: String] = [:]
        if let bluezBus {
            // The box's adapter as gateway `box` in the living room, on the mock's private bus.
            text =
                text.replacingOccurrences(of: "gateways:\n", with: "gateways:\n  - name: box\n    format: bluez\n\(bluezExtra)")
                + "rooms:\n  box: Living room\n"
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = bluezBus
        }
        yaml = text
        configuration = try ConfigurationLoader.load(yaml: yaml, environment: environment, hostname: "testhost").get()
        runner = RuntimeRunner(
            configuration: configuration,
            databasePath: self.directory.appendingPathComponent("aabridge.sqlite3").path)
    }

    static func yaml(
        server: String, database: String, mqttExtra: String = "", debounce: Int = 0,
        availability: Int = 120, health: Int = 60, homeAssistant: Bool = false,
        headphonesIRK: String? = nil, follow: Bool = true, identityExtra: String = "",
        extraProducts: String = "", extraAccessories: String = ""
    ) -> String {
        """
        mqtt:
          server: \(server)
          base_topic: aabridge
          client_id: bridge-\(UUID().uuidString.prefix(8))
          keepalive: 10
          reconnect: {min_s: 1, max_s: 1}
        \(mqttExtra)
        homeassistant:
          enabled: \(homeAssistant)
        storage:
          path: \(database)
        health:
          interval_s: \(health)
        log:
          level: error
        setup:
          supports: [bluetooth]
          bluetooth:
            company_identifiers: [0x004C]
            services: ["FE2C"]
            names: ["Acme"]
        products:
          - name: AirPods Pro
            hardware: inEarBud
            capabilities: [audioSwitching, placement]
            auto_register: true
            placement_decoder: apple_proximity
            setup_options: [rename]
            descriptor:
              bluetooth_company_identifier: 0x004C
              bluetooth_manufacturer_data_blob: "0719010e20"
              bluetooth_manufacturer_data_mask: "ffffffffff"
          - name: Acme Studio Headphones
            hardware: overEarHeadphone
            capabilities: [audioSwitching, placement]
            placement_decoder: none
            setup_options: [rename, confirmAuthorization]
            descriptor:
              bluetooth_service_uuid: "FE2C"
              bluetooth_name_substring: "Acme"
          - name: Acme Speaker
            hardware: overEarHeadphone
            capabilities: [audioSwitching]
            descriptor:
              bluetooth_service_uuid: "FE2C"
              bluetooth_name_substring: "Acme"
        \(extraProducts)
        gateways:
          - name: omg
            format: openmqttgateway
          - name: native
            format: native
          - name: esp
            format: espresense
          - name: tasmota
            format: tasmota
        accessories:
          - id: "\(Fixture.airPods)"
            name: Alice's AirPods
            product: AirPods Pro
          - id: "\(Fixture.headphones)"
            name: Bob's Headphones
            product: Acme Studio Headphones
            irk: \(headphonesIRK.map { "\"\($0)\"" } ?? "null")
          - id: "\(Fixture.speaker)"
            name: Kitchen Speaker
            product: Acme Speaker
        \(extraAccessories)
        sources:
          - address: "\(Fixture.phone)"
            name: Alice's iPhone
        switching:
          placement_debounce_ms: \(debounce)
          availability_timeout_s: \(availability)
          immediate_rssi: -50
        identity:
          follow: \(follow)
        \(identityExtra)

        """
    }

    /// Opens the store, starts the runtime and waits until `bridge/state` is online.
    func start(
        observer: Observer, clock: @escaping @Sendable () -> Timestamp = BridgeClock.now,
        prepare: (BridgeRuntime) -> Void = { _ in }
    ) async throws {
        try await runner.start(observer: observer, clock: clock, prepare: prepare)
    }

    /// Stops the runtime cleanly and returns its exit status.
    @discardableResult
    func stop() async -> Int32? { await runner.stop() }

    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }
}

/// Starts a bridge with a fresh broker and observer, runs `body`, then stops everything.
/// - Parameters:
///   - homeAssistant: `homeassistant.enabled`.
///   - subscribe: what the observer subscribes to.
///   - prepare: adjusts the runtime (an internal bound) before it runs.
func withBridge(
    debounceMilliseconds: Int = 0, availabilityTimeoutSeconds: Int = 120, healthIntervalSeconds: Int = 60,
    homeAssistant: Bool = false, subscribe: [String] = ["aabridge/#"],
    prepare: (BridgeRuntime) -> Void = { _ in },
    _ body: (BridgeHarness, Observer) async throws -> Void
) async throws {
    let harness = try BridgeHarness(
        debounceMilliseconds: debounceMilliseconds,
        availabilityTimeoutSeconds: availabilityTimeoutSeconds,
        healthIntervalSeconds: healthIntervalSeconds, homeAssistant: homeAssistant)
    defer { harness.removeDirectory() }
    try await harness.run(subscribe: subscribe, prepare: prepare) { observer in try await body(harness, observer) }
}

extension BridgeHarness {
    /// Starts this bridge with a new observer, runs `body`, then stops the bridge (expecting a
    /// clean exit) and the observer; the directory stays (a restart may reuse it).
    func run(
        subscribe: [String] = ["aabridge/#"], prepare: (BridgeRuntime) -> Void = { _ in },
        _ body: (Observer) async throws -> Void
    ) async throws {
        let observer = try await Observer(broker: broker, subscribe: subscribe)
        try await start(observer: observer, prepare: prepare)
        do {
            try await body(observer)
        } catch {
            await stop()
            await observer.disconnect()
            throw error
        }
        let status = await stop()
        #expect(status == 0)
        await observer.disconnect()
    }
}
