import AccessoryKit
import Foundation
import JSON
import Telemetry
import Testing

@testable import Configuration

/// Defaults, the shipped files, and reading each section into values.
@Suite struct ConfigurationLoaderTests {
    @Test func emptyFileGivesTheDocumentedDefaults() throws {
        let configuration = try ConfigurationTestSupport.load("")
        #expect(configuration.mqtt.server == "mqtt://localhost:1883")
        #expect(configuration.mqtt.host == "localhost")
        #expect(configuration.mqtt.port == 1883)
        #expect(!configuration.mqtt.usesTLS)
        #expect(configuration.mqtt.baseTopic == "aabridge")
        #expect(configuration.mqtt.clientID == "aabridge-testhost")
        #expect(configuration.mqtt.user == nil)
        #expect(configuration.mqtt.password == nil)
        #expect(configuration.mqtt.keepalive == 60)
        #expect(configuration.mqtt.version == .v5)
        #expect(configuration.mqtt.reconnect == .init(minimumSeconds: 1, maximumSeconds: 30))
        #expect(configuration.homeAssistant == .init(enabled: true, discoveryPrefix: "homeassistant", statusTopic: "homeassistant/status"))
        #expect(configuration.storage.path == "data/aabridge.sqlite3")
        #expect(configuration.health.intervalSeconds == 60)
        #expect(configuration.log == .init(level: .info, format: .text))
        #expect(configuration.setup == SetupDeclaration(supports: [.bluetooth]))
        #expect(configuration.products.isEmpty && configuration.gateways.isEmpty)
        #expect(configuration.accessories.isEmpty && configuration.sources.isEmpty)
        #expect(
            configuration.switching
                == SwitchingSettings(placementDebounceMilliseconds: 500, availabilityTimeoutSeconds: 120, immediateRSSI: -50))
        // Empty sections and explicit nulls keep the defaults too.
        #expect(try ConfigurationTestSupport.load("mqtt:\nlog:\nswitching: null\nproducts: []\n") == configuration)
    }

    @Test func defaultClientIDUsesTheMachineHostname() throws {
        guard case let .success(configuration) = ConfigurationLoader.load(yaml: "", environment: [:]) else {
            Issue.record("empty configuration failed")
            return
        }
        #expect(configuration.mqtt.clientID == "aabridge-\(ConfigurationLoader.machineHostname())")
        #expect(!ConfigurationLoader.machineHostname().isEmpty)
    }

    /// A first run plants nothing the user does not own: the real products and the common
    /// gateways, no accessory (each would be migrated into the database and become a device in
    /// Home Assistant) and no source.
    @Test func shippedConfigurationLoads() throws {
        let path = ConfigurationTestSupport.repositoryFile("config/aabridge.yaml")
        let result = ConfigurationLoader.load(path: path, environment: [:], hostname: "testhost")
        guard case let .success(configuration) = result else {
            Issue.record("config/aabridge.yaml does not load: \(result)")
            return
        }
        #expect(configuration.mqtt.server == "mqtt://localhost:1883")
        #expect(configuration.storage.path == "data/aabridge.sqlite3")
        #expect(configuration.products.map(\.name) == ["AirPods or Beats", "Fast Pair headphones"])
        let airPods = try #require(configuration.product(named: "AirPods or Beats"))
        #expect(airPods.placementDecoder == .appleProximity)
        #expect(airPods.product.autoRegister)
        #expect(airPods.product.capabilities == [.audioSwitching, .placement])
        #expect(airPods.product.descriptor.bluetoothCompanyIdentifier == 0x004C)
        let fastPair = try #require(configuration.product(named: "Fast Pair headphones"))
        #expect(fastPair.placementDecoder == PlacementDecoder.none)
        #expect(fastPair.product.capabilities == [.audioSwitching])
        #expect(fastPair.product.descriptor.bluetoothServiceUUID == BluetoothUUID(shortValue: 0xFE2C))
        #expect(configuration.gateways.map(\.format) == [.openmqttgateway, .espresense, .tasmota, .native])
        #expect(configuration.accessories.isEmpty)
        #expect(configuration.engine.migrations.isEmpty)
        #expect(configuration.sources.isEmpty)
        #expect(configuration.switching == SwitchingSettings())
        #expect(configuration.engine.validate().isEmpty)
    }

    @Test func demoConfigurationLoads() throws {
        let path = ConfigurationTestSupport.repositoryFile("config/examples/demo.yaml")
        let result = ConfigurationLoader.load(path: path, environment: [:], hostname: "testhost")
        guard case let .success(configuration) = result else {
            Issue.record("config/examples/demo.yaml does not load: \(result)")
            return
        }
        #expect(configuration.mqtt.server == "mqtt://localhost:1883")
        #expect(configuration.storage.path == "data/aabridge.sqlite3")
        #expect(configuration.products.map(\.name) == ["AirPods or Beats", "Acme Studio Headphones"])
        let airPods = try #require(configuration.product(named: "AirPods or Beats"))
        #expect(airPods.placementDecoder == .appleProximity)
        #expect(airPods.product.autoRegister)
        #expect(airPods.product.capabilities == [.audioSwitching, .placement])
        #expect(airPods.product.setupOptions.contains(.rename))
        #expect(airPods.product.descriptor.bluetoothCompanyIdentifier == 0x004C)
        let acme = try #require(configuration.product(named: "Acme Studio Headphones"))
        #expect(acme.product.hardware == .overEarHeadphone)
        #expect(acme.product.descriptor.bluetoothServiceUUID == BluetoothUUID(shortValue: 0xFE2C))
        #expect(acme.product.descriptor.bluetoothNameSubstring == "Acme")
        #expect(configuration.gateways.map(\.format) == [.openmqttgateway, .native])
        #expect(configuration.gateways[0].topic == "home/+/BTtoMQTT/#")
        #expect(configuration.gateways[0].statusTopic == "home/+/LWT")
        #expect(configuration.gateways[1].topic == "aabridge/telemetry/+/+")
        #expect(configuration.gateways[1].statusTopic == nil)
        #expect(configuration.accessories.map(\.migration.product) == ["AirPods or Beats"])
        #expect(configuration.sources == [SourceConfiguration(address: BluetoothAddress("11:22:33:44:55:66")!, name: "Alice's iPhone")])
        #expect(configuration.switching == SwitchingSettings())
        #expect(configuration.engine.validate().isEmpty)
    }

    @Test func minimalExampleLoads() {
        let path = ConfigurationTestSupport.repositoryFile("config/examples/minimal.yaml")
        let result = ConfigurationLoader.load(path: path, environment: [:], hostname: "testhost")
        if case let .failure(errors) = result { Issue.record("minimal.yaml: \(errors)") }
        #expect((try? result.get().warnings) == [], "an example the docs point at has nothing to warn about")
    }

    @Test func tlsExampleLoadsWithItsPasswordFile() throws {
        let secretFile = try ConfigurationTestSupport.temporaryFile(Array("s3cr3t-TLS\n".utf8), name: "mqtt_password")
        defer { ConfigurationTestSupport.remove(secretFile) }
        let caFile = try ConfigurationTestSupport.temporaryFile(Array("-----BEGIN CERTIFICATE-----\n".utf8), name: "broker-ca.pem")
        defer { ConfigurationTestSupport.remove(caFile) }
        let path = ConfigurationTestSupport.repositoryFile("config/examples/tls-password.yaml")
        // The example points at /run/secrets and /etc/ssl; the overrides show how a deployment
        // moves them (every file the configuration names must exist).
        let result = ConfigurationLoader.load(
            path: path, environment: ["AABRIDGE_MQTT_PASSWORD_FILE": secretFile, "AABRIDGE_MQTT_CA": caFile], hostname: "testhost")
        guard case let .success(configuration) = result else {
            Issue.record("tls-password.yaml: \(result)")
            return
        }
        #expect(configuration.mqtt.usesTLS)
        #expect(configuration.mqtt.host == "broker.example.net")
        #expect(configuration.mqtt.port == 8883)
        #expect(configuration.mqtt.password?.revealed == "s3cr3t-TLS")
        #expect(configuration.mqtt.passwordFile == secretFile)
        // The rule reads the service its descriptor names.
        #expect(
            configuration.products[0].placementDecoder
                == .rule(.init(source: .service(BluetoothUUID(shortValue: 0xFE2C)), offset: 3, mask: 1, wornWhen: 1)))
        #expect(configuration.gateways.map(\.topic) == ["home/+/BTtoMQTT/#", "espresense/devices/#", "tele/+/BLE"])
        #expect(configuration.gateways.map(\.statusTopic) == ["home/+/LWT", "espresense/rooms/+/status", "tele/+/LWT"])
    }

    @Test(arguments: [
        ("mqtt://broker", "broker", 1883, false),
        ("mqtts://broker", "broker", 8883, true),
        ("mqtt://10.0.0.2:1884/", "10.0.0.2", 1884, false),
        ("mqtts://[::1]:8884", "::1", 8884, true),
    ])
    func serverURLs(server: String, host: String, port: Int, tls: Bool) throws {
        let configuration = try ConfigurationTestSupport.load("mqtt:\n  server: \(server)\n")
        #expect(configuration.mqtt.host == host)
        #expect(configuration.mqtt.port == port)
        #expect(configuration.mqtt.usesTLS == tls)
    }

    @Test func integersAcceptDecimalAndHex() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            setup:
              bluetooth:
                company_identifiers: [0x004C, 76, 0xfe2c, "0x0006"]
            mqtt:
              keepalive: 0x3C
            switching:
              immediate_rssi: -60
              placement_debounce_ms: 0
            """)
        #expect(configuration.setup.bluetoothCompanyIdentifiers == [0x004C, 0xFE2C, 0x0006])
        #expect(configuration.mqtt.keepalive == 60)
        #expect(configuration.switching.immediateRSSI == -60)
        #expect(configuration.switching.placementDebounceMilliseconds == 0)
    }

    @Test func gatewayTopicsDefaultPerFormatAndFollowTheBaseTopic() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            mqtt: {base_topic: home/aabridge}
            gateways:
              - {name: a, format: openmqttgateway}
              - {name: b, format: theengs, status_topic: null}
              - {name: c, format: espresense}
              - {name: d, format: tasmota, topic: "tele/+/BLE2"}
              - {name: e, format: native}
            """)
        #expect(
            configuration.gateways.map(\.topic) == [
                "home/+/BTtoMQTT/#", "home/+/BTtoMQTT/#", "espresense/devices/#", "tele/+/BLE2", "home/aabridge/telemetry/+/+",
            ])
        #expect(configuration.gateways.map(\.statusTopic) == ["home/+/LWT", nil, "espresense/rooms/+/status", "tele/+/LWT", nil])
    }

    @Test("a bluez gateway: adapter and scanning, no topics; the system bus from DBUS_SYSTEM_BUS_ADDRESS")
    func bluezGateway() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            gateways:
              - {name: hallway, format: bluez}
              - {name: attic, format: bluez, adapter: hci1, scanning: passive}
            """, environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/tmp/bus"])
        #expect(configuration.gateways.map(\.adapter) == [nil, "hci1"])
        #expect(configuration.gateways.map(\.scanning) == [.active, .passive])
        #expect(configuration.gateways.map(\.statusTopic) == [nil, nil])
        #expect(configuration.systemBusAddress == "unix:path=/tmp/bus")
        #expect(try ConfigurationTestSupport.load("gateways: []").systemBusAddress == nil)
    }

    @Test("a bluez gateway's bad keys are errors naming the key; adapter and scanning only on bluez")
    func bluezGatewayRefusals() {
        let issues = ConfigurationTestSupport.issues(
            """
            gateways:
              - {name: a, format: bluez, topic: "home/+/x"}
              - {name: b, format: bluez, adapter: "hci0/../x"}
              - {name: "c/d", format: bluez}
              - {name: e, format: openmqttgateway, adapter: hci0}
              - {name: f, format: bluez, scanning: sometimes}
            """)
        let paths = issues.map(\.path)
        #expect(paths == ["gateways[0].topic", "gateways[1].adapter", "gateways[2].name", "gateways[3].adapter", "gateways[4].scanning"])
        #expect(issues.first { $0.path == "gateways[1].adapter" }?.message.contains("hci0") == true)
    }

    @Test func placementDecoderRuleAndAccessoryIRK() throws {
        let configuration = try ConfigurationTestSupport.load(
            ConfigurationTestSupport.validBase + """
                  - name: Acme
                    hardware: onEarHeadphone
                    capabilities: [audioSwitching]
                    setup_options: [confirmAuthorization, finishInApp]
                    placement_decoder:
                      rule: {source: manufacturer, offset: 3, mask: 0x06, worn_when: 0x02}
                    descriptor:
                      bluetooth_company_identifier: 0x004C
                      bluetooth_range: immediate
                      bluetooth_name_compare: caseInsensitive
                      supported_options: [bluetoothPairingLE, bluetoothTransportBridging]
                accessories:
                  - id: "a1-b2-c3-d4-e5-f6"
                    name: Bob's
                    product: Acme
                    irk: "00112233445566778899aabbccddeeff"
                """)
        let acme = try #require(configuration.product(named: "Acme"))
        #expect(
            acme.placementDecoder == .rule(.init(source: .manufacturer(companyIdentifier: 0x004C), offset: 3, mask: 0x06, wornWhen: 0x02)))
        #expect(acme.product.capabilities == [.audioSwitching])
        #expect(acme.product.setupOptions == [.confirmAuthorization, .finishInApp])
        #expect(acme.product.descriptor.bluetoothRange == .immediate)
        #expect(acme.product.descriptor.bluetoothNameCompare == .caseInsensitive)
        #expect(acme.product.descriptor.supportedOptions == [.bluetoothPairingLE, .bluetoothTransportBridging])
        #expect(configuration.accessories[0].keys.irk?.bytes.count == 16)
        #expect(configuration.engine.keys[configuration.accessories[0].migration.id]?.irk != nil)
        #expect(configuration.accessories[0].migration.id.description == "A1:B2:C3:D4:E5:F6")
        #expect(configuration.engine.migrations.count == 1)
    }

    @Test func validateCommandExitsWithStatusTwo() throws {
        for file in ["config/aabridge.yaml", "config/examples/demo.yaml"] {
            let good = ConfigurationLoader.validate(path: ConfigurationTestSupport.repositoryFile(file), environment: [:])
            #expect(good.exitStatus == 0, "\(file)")
            #expect(good.report.contains("valid"), "\(file)")
        }
        let path = try ConfigurationTestSupport.temporaryFile(Array("log: {level: loud}\n".utf8))
        defer { ConfigurationTestSupport.remove(path) }
        let bad = ConfigurationLoader.validate(path: path, environment: [:])
        #expect(bad.exitStatus == 2)
        #expect(bad.report.contains("log.level: unknown value 'loud'; allowed: debug, info, warning, error"))
        let missing = ConfigurationLoader.validate(path: "/nonexistent/aabridge.yaml", environment: [:])
        #expect(missing.exitStatus == 2)
        #expect(missing.report.contains("no such file"))
    }

    @Test func summaryIsJSONReady() throws {
        let path = ConfigurationTestSupport.repositoryFile("config/aabridge.yaml")
        guard case let .success(configuration) = ConfigurationLoader.load(path: path, environment: [:], hostname: "h") else {
            Issue.record("shipped config failed")
            return
        }
        let json = configuration.summary.serialized
        #expect(json.contains("\"base_topic\":\"aabridge\""))
        #expect(json.contains("\"products\":[{"))
        #expect(json.contains("\"company_identifiers\":[\"0x004C\"]"))
        #expect(try JSONParser.parse(json) == configuration.summary, "round trip")
    }

    /// bridge/info's `config` text, byte for byte: keys sorted at every level, nulls kept.
    @Test func summaryText() throws {
        let path = ConfigurationTestSupport.repositoryFile("config/examples/minimal.yaml")
        guard
            case let .success(configuration) = ConfigurationLoader.load(
                path: path, environment: ["AABRIDGE_MQTT_PASSWORD": "x"], hostname: "h")
        else {
            Issue.record("minimal example failed")
            return
        }
        #expect(
            configuration.summary.serialized
                == #"{"accessories":[],"cluster":{"enabled":false,"instance":"h","partitions":64},"gateways":[{"format":"openmqttgateway","name":"omg","status_topic":"home/+/LWT","topic":"home/+/BTtoMQTT/#"}],"health":{"interval_s":60},"homeassistant":{"discovery_prefix":"homeassistant","enabled":true,"picker_timeout_s":120,"status_topic":"homeassistant/status"},"http":{"allowed_clients":[],"allowed_hosts":[],"connection_limit":32,"connections_per_client":8,"header_timeout_s":5,"listen":null,"timeout_s":30,"token_file":null,"token_set":false},"identity":{"follow":true,"lookalike_window_s":600,"reattach":"auto"},"log":{"format":"text","level":"info"},"mqtt":{"base_topic":"aabridge","ca":null,"cert":null,"client_id":"aabridge-h","keepalive":60,"key":null,"max_packet_size":262144,"password_file":null,"password_set":true,"reconnect":{"max_s":30,"min_s":1},"server":"mqtt://localhost:1883","session_expiry_s":3600,"user":null,"version":5},"products":[{"auto_register":false,"capabilities":["audioSwitching","placement"],"hardware":"inEarBud","name":"AirPods or Beats","placement_decoder":"apple_proximity"}],"rooms":{},"setup":{"bluetooth":{"company_identifiers":["0x004C"],"names":[],"services":[]},"supports":["bluetooth"]},"sources":[],"storage":{"path":"data/aabridge.sqlite3"},"switching":{"availability_timeout_s":120,"immediate_rssi":-50,"placement_debounce_ms":500}}"#
        )
    }
}
