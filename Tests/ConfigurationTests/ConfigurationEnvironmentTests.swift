import Foundation
import Testing

@testable import Configuration

/// `AABRIDGE_<SECTION>_<KEY>` overrides, `password_file`, and the secrets policy.
@Suite struct ConfigurationEnvironmentTests {
    static let secret = "Hunter2-Z9q!x"

    @Test func overridesWinOverTheFile() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            mqtt:
              server: mqtt://file-broker:1883
            log:
              level: info
            """,
            environment: [
                "AABRIDGE_MQTT_SERVER": "mqtts://env-broker:8884",
                "AABRIDGE_MQTT_PASSWORD": Self.secret,
                "AABRIDGE_MQTT_RECONNECT_MAX_S": "0x3C",
                "AABRIDGE_STORAGE_PATH": "/var/lib/aabridge/db.sqlite3",
                "AABRIDGE_LOG_LEVEL": "debug",
                "AABRIDGE_HOMEASSISTANT_ENABLED": "false",
                "AABRIDGE_HEALTH_INTERVAL_S": "15",
                "AABRIDGE_SWITCHING_PLACEMENT_DEBOUNCE_MS": "0",
                "AABRIDGE_IDENTITY_FOLLOW": "false",
                "AABRIDGE_CONFIG": "ignored: not a section variable",
                "HOME": "/root",
            ])
        #expect(configuration.mqtt.server == "mqtts://env-broker:8884")
        #expect(configuration.mqtt.port == 8884 && configuration.mqtt.usesTLS)
        #expect(configuration.mqtt.password?.revealed == Self.secret)
        #expect(configuration.mqtt.reconnect.maximumSeconds == 60)
        #expect(configuration.storage.path == "/var/lib/aabridge/db.sqlite3")
        #expect(configuration.log.level == .debug)
        #expect(!configuration.homeAssistant.enabled)
        #expect(configuration.health.intervalSeconds == 15)
        #expect(configuration.switching.placementDebounceMilliseconds == 0)
        #expect(!configuration.identity.follow)
    }

    @Test func passwordFromTheEnvironmentIsLiteral() throws {
        let configuration = try ConfigurationTestSupport.load("", environment: ["AABRIDGE_MQTT_PASSWORD": "null"])
        #expect(configuration.mqtt.password?.revealed == "null")
    }

    @Test func badValueNamesTheVariable() {
        let issues = ConfigurationTestSupport.issues(
            "switching:\n  placement_debounce_ms: 100\n",
            environment: ["AABRIDGE_SWITCHING_PLACEMENT_DEBOUNCE_MS": "-5"])
        #expect(issues.count == 1)
        #expect(issues.first?.path == "switching.placement_debounce_ms")
        #expect(issues.first?.origin == .environment(variable: "AABRIDGE_SWITCHING_PLACEMENT_DEBOUNCE_MS"))
        #expect(issues.first?.description.contains("from environment variable AABRIDGE_SWITCHING_PLACEMENT_DEBOUNCE_MS") == true)
        let level = ConfigurationTestSupport.issues("", environment: ["AABRIDGE_LOG_LEVEL": "chatty"])
        #expect(
            level.map(\.description) == [
                "log.level: unknown value 'chatty'; allowed: debug, info, warning, error (from environment variable AABRIDGE_LOG_LEVEL)"
            ])
    }

    @Test func misspelledVariableIsReportedWithASuggestion() {
        let issues = ConfigurationTestSupport.issues("", environment: ["AABRIDGE_MQTT_SEVER": "mqtt://x"])
        #expect(issues.map(\.path) == ["AABRIDGE_MQTT_SEVER"])
        #expect(issues.first?.message.contains("did you mean AABRIDGE_MQTT_SERVER?") == true)
    }

    @Test func overrideOfASectionThatIsNotAMappingLeavesTheTypeError() {
        let issues = ConfigurationTestSupport.issues("mqtt: [x]\n", environment: ["AABRIDGE_MQTT_SERVER": "mqtt://x"])
        #expect(issues.map(\.path) == ["mqtt"])
    }

    @Test func passwordFileIsReadAndItsNewlineTrimmed() throws {
        let file = try ConfigurationTestSupport.temporaryFile(Array("\(Self.secret)\n".utf8), name: "secret")
        defer { ConfigurationTestSupport.remove(file) }
        let configuration = try ConfigurationTestSupport.load("mqtt:\n  user: bridge\n  password_file: \(file)\n")
        #expect(configuration.mqtt.password?.revealed == Self.secret)
        #expect(configuration.mqtt.passwordFile == file)
        #expect(configuration.mqtt.user == "bridge")
    }

    @Test func passwordFileProblemsNameTheKeyNotTheContent() throws {
        let empty = try ConfigurationTestSupport.temporaryFile(Array("\n".utf8), name: "empty")
        defer { ConfigurationTestSupport.remove(empty) }
        let issues = ConfigurationTestSupport.issues("mqtt:\n  password_file: \(empty)\n")
        #expect(issues.map(\.path) == ["mqtt.password_file"])
        #expect(issues.first?.message.contains("is empty") == true)
        let directory = FileManager.default.temporaryDirectory.path
        #expect(ConfigurationTestSupport.issues("mqtt:\n  password_file: \(directory)\n").first?.message.contains("directory") == true)
        // The environment's password and the file's password_file together are refused too.
        let both = ConfigurationTestSupport.issues(
            "mqtt:\n  password_file: \(empty)\n", environment: ["AABRIDGE_MQTT_PASSWORD": Self.secret])
        #expect(both.map(\.path) == ["mqtt.password"])
    }

    @Test func secretsNeverAppearInDescriptionsErrorsOrTheSummary() throws {
        let file = try ConfigurationTestSupport.temporaryFile(Array("\(Self.secret)\n".utf8), name: "secret")
        defer { ConfigurationTestSupport.remove(file) }
        let path = ConfigurationTestSupport.repositoryFile("config/aabridge.yaml")
        let irk = "00112233445566778899aabbccddeeff"
        var texts: [String] = []

        // A valid configuration with the password from a file, one from the environment, and an irk.
        for environment in [["AABRIDGE_MQTT_PASSWORD_FILE": file], ["AABRIDGE_MQTT_PASSWORD": Self.secret]] {
            guard case let .success(configuration) = ConfigurationLoader.load(path: path, environment: environment, hostname: "h") else {
                Issue.record("shipped config failed with \(environment.keys)")
                continue
            }
            #expect(configuration.mqtt.password?.revealed == Self.secret)
            var dumped = ""
            dump(configuration, to: &dumped)
            texts += [
                String(describing: configuration), String(reflecting: configuration), "\(configuration.mqtt)",
                String(reflecting: configuration.mqtt), dumped, configuration.summary.serialized,
                ConfigurationLoader.validate(path: path, environment: environment).report,
            ]
        }
        let withIRK = try ConfigurationTestSupport.load(
            ConfigurationTestSupport.validBase + """
                accessories:
                  - {id: "A1:B2:C3:D4:E5:F6", name: a, product: AirPods Pro, irk: "\(irk)"}
                """)
        texts += [String(describing: withIRK), String(reflecting: withIRK), withIRK.summary.serialized]

        // Broken files around the secret: wrong types, both sources, credentials in the URL, bad irk.
        let broken: [(String, [String: String])] = [
            ("mqtt:\n  password: \"\(Self.secret)\"\n  password_file: \(file)\n", [:]),
            ("mqtt:\n  password: [\"\(Self.secret)\"]\n", [:]),
            ("mqtt:\n  server: mqtt://user:\(Self.secret)@broker:1883\n", [:]),
            ("mqtt:\n  server: tcp://user:\(Self.secret)@broker\n", [:]),
            ("mqtt:\n  keepalive: x\n", ["AABRIDGE_MQTT_PASSWORD": Self.secret, "AABRIDGE_MQTT_PASSWORD_FILE": file]),
            (
                ConfigurationTestSupport.validBase
                    + "accessories:\n  - {id: \"A1:B2:C3:D4:E5:F6\", name: a, product: AirPods Pro, irk: \"\(irk)zz\"}\n", [:]
            ),
        ]
        for (yaml, environment) in broken {
            guard case let .failure(errors) = ConfigurationLoader.load(yaml: yaml, environment: environment, hostname: "h") else {
                Issue.record("expected errors for \(yaml.prefix(20))")
                continue
            }
            texts.append(errors.description)
            texts += errors.issues.map { String(reflecting: $0) }
        }
        #expect(texts.count > 20)
        for text in texts {
            #expect(!text.contains(Self.secret), "secret leaked: \(text)")
            #expect(!text.lowercased().contains(irk), "irk leaked: \(text)")
        }
    }
}
