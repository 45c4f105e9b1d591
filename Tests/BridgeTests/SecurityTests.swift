import Configuration
import Foundation
import LocalProcess
import MQTT
import Storage
import TestSupport
import Testing

@testable import Bridge

/// The bridge against a mosquitto with a TLS listener, a password file and ACLs: server
/// verification on by default, client certificates, the password from a file or from the
/// environment (through the loader's `environment:` parameter, never setenv), and no secret
/// in anything the bridge emits.
@Suite("Security: TLS, credentials, secrets")
struct SecurityTests {
    static let acl = """
        user bridge
        topic readwrite aabridge/#
        topic readwrite homeassistant/#
        topic read home/#
        user observer
        topic readwrite aabridge/#
        topic readwrite home/#
        topic read homeassistant/#

        """

    struct Setup {
        let broker: MosquittoBroker
        let certificates: TestCertificates
        let directory: URL
        let secret: String
        var database: String { directory.appendingPathComponent("aabridge.sqlite3").path }
        var passwordFile: String { directory.appendingPathComponent("mqtt-password").path }
    }

    static func setup(requireClientCertificate: Bool = false) throws -> Setup {
        let secret = "S3cret-\(UUID().uuidString.prefix(12))"
        let certificates = try TestCertificates()
        let broker = try MosquittoBroker(
            .init(
                users: ["bridge": secret, "observer": "observer-password"], acl: acl,
                tls: certificates, requireClientCertificate: requireClientCertificate))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-sec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try (secret + "\n").write(toFile: directory.appendingPathComponent("mqtt-password").path, atomically: true, encoding: .utf8)
        return Setup(broker: broker, certificates: certificates, directory: directory, secret: secret)
    }

    static func configuration(_ setup: Setup, mqtt: String, environment: [String: String] = [:]) throws -> BridgeConfiguration {
        let yaml = BridgeHarness.yaml(server: "mqtts://127.0.0.1:\(setup.broker.tlsPort ?? 0)", database: setup.database, mqttExtra: mqtt)
        switch ConfigurationLoader.load(yaml: yaml, environment: environment, hostname: "test") {
        case .success(let configuration): return configuration
        case .failure(let errors): throw BrokerError(errors.description)
        }
    }

    /// Runs the bridge over mqtts, exercises it end to end, and checks no message carries the secret.
    static func endToEnd(_ setup: Setup, _ configuration: BridgeConfiguration) async throws {
        let observer = try await Observer(
            broker: setup.broker, user: "observer", password: "observer-password",
            subscribe: ["aabridge/#", "homeassistant/#"])
        let bridge = ClockedBridge(configuration: configuration, databasePath: setup.database)
        try await bridge.start(observer: observer)
        let health = try await observer.request("health")
        #expect(health["status"] == "ok")
        let telemetry = "aabridge/telemetry/livingroom/\(Fixture.airPodsTopic)"
        try await observer.publish(telemetry, #"{"source_connected":"\#(Fixture.phone)"}"#)
        try await observer.publish(telemetry, #"{"placement":"inEar"}"#)
        await observer.waitFor("aabridge/accessory/\(Fixture.airPodsTopic)/decision") { $0["action"] == "route" }
        let refused = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"""#)
        #expect(refused["error"] != nil)
        await observer.waitFor("aabridge/bridge/info")
        #expect(await bridge.stop() == 0)
        await observer.waitFor("aabridge/bridge/state") { $0["state"] == "offline" }
        let everything = observer.messages.elements
        #expect(everything.count > 10)
        for message in everything {
            #expect(!message.payloadString.contains(setup.secret), "the password is in \(message.topic)")
            #expect(!message.topic.contains(setup.secret))
        }
        let info = observer.json(on: "aabridge/bridge/info").last
        #expect(info?["config"]?["mqtt"] != nil, "bridge/info carries the configuration summary")
        await observer.disconnect()
    }

    @Test("mqtts with the test CA (server verified), user + password_file, ACLs: works end to end, no secret published")
    func tlsPasswordFile() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let configuration = try Self.configuration(
            setup,
            mqtt: """
                  ca: \(setup.certificates.caCertificate.path)
                  user: bridge
                  password_file: \(setup.passwordFile)
                """)
        #expect(!"\(configuration)".contains(setup.secret))
        #expect(!configuration.summary.serialized.contains(setup.secret))
        try await Self.endToEnd(setup, configuration)
    }

    @Test("mqtts with a client certificate required, password from AABRIDGE_MQTT_PASSWORD (loader environment)")
    func clientCertificateEnvironmentPassword() async throws {
        let setup = try Self.setup(requireClientCertificate: true)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let configuration = try Self.configuration(
            setup,
            mqtt: """
                  ca: \(setup.certificates.caCertificate.path)
                  cert: \(setup.certificates.clientCertificate.path)
                  key: \(setup.certificates.clientKey.path)
                  user: bridge
                """, environment: ["AABRIDGE_MQTT_PASSWORD": setup.secret])
        #expect(configuration.mqtt.password?.revealed == setup.secret)
        try await Self.endToEnd(setup, configuration)
    }

    /// Starts the bridge and reports whether it came online within `seconds`.
    static func comesOnline(_ setup: Setup, _ configuration: BridgeConfiguration, seconds: Int = 4) async throws -> Bool {
        let observer = try await Observer(broker: setup.broker, user: "observer", password: "observer-password")
        let bridge = ClockedBridge(configuration: configuration, databasePath: setup.database)
        try await bridge.start(observer: observer, waitOnline: false)
        let online = await observer.messages.wait(timeout: .seconds(seconds)) { elements in
            elements.contains { $0.topic == "aabridge/bridge/state" && $0.payloadString == #"{"state":"online"}"# }
        }
        await bridge.stop()
        await observer.disconnect()
        return online
    }

    @Test("server verification is on by default: a broker certificate from another CA is refused")
    func serverVerification() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let other = try TestCertificates(name: "some other CA")
        let wrongCA = try Self.configuration(
            setup,
            mqtt: """
                  ca: \(other.caCertificate.path)
                  user: bridge
                  password_file: \(setup.passwordFile)
                """)
        #expect(try await !Self.comesOnline(setup, wrongCA), "connected to a broker its CA did not sign")
        // No `ca`: the system trust store, which does not know the test CA either.
        let systemStore = try Self.configuration(
            setup,
            mqtt: """
                  user: bridge
                  password_file: \(setup.passwordFile)
                """)
        #expect(try await !Self.comesOnline(setup, systemStore), "connected without verifying the server")
    }

    @Test("a wrong password is refused by the broker; the real binary's stderr never shows either password")
    func wrongPasswordNoSecretInStderr() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let wrong = "Wr0ng-\(UUID().uuidString.prefix(12))"
        let wrongFile = setup.directory.appendingPathComponent("wrong-password").path
        try wrong.write(toFile: wrongFile, atomically: true, encoding: .utf8)
        let configFile = setup.directory.appendingPathComponent("aabridge.yaml").path
        try BridgeHarness.yaml(
            server: "mqtts://127.0.0.1:\(setup.broker.tlsPort ?? 0)", database: setup.database,
            mqttExtra: """
                  ca: \(setup.certificates.caCertificate.path)
                  user: bridge
                  password_file: \(wrongFile)
                """
        ).replacingOccurrences(of: "level: error", with: "level: debug").write(toFile: configFile, atomically: true, encoding: .utf8)
        let output = setup.directory.appendingPathComponent("stderr.txt").path
        let process = try ChildProcess(path: try ExecutableTests.executable, arguments: ["run", "--config", configFile], output: output)
        // Until the refusal is reported (the log level is debug), at most 20 s.
        _ = await eventually(timeout: .seconds(20)) {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("MQTT:")
        }
        process.stop()
        let validate = setup.directory.appendingPathComponent("validate.txt").path
        _ = try ChildProcess(path: try ExecutableTests.executable, arguments: ["validate", "--config", configFile], output: validate).wait()
        let text = (try String(contentsOfFile: output, encoding: .utf8)) + (try String(contentsOfFile: validate, encoding: .utf8))
        #expect(!text.isEmpty)
        #expect(!text.contains(wrong) && !text.contains(setup.secret), "\(text)")
        #expect(text.contains("MQTT:"), "the refusal is reported: \(text)")
    }
}
