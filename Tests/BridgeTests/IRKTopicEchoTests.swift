import Foundation
import JSON
import LocalProcess
import TestSupport
import Testing

/// ESPresense names a device it resolved with one of its `known_irks` `irk:<32 hex digits>`,
/// in its topics (`espresense/devices/irk:<hex>/<room>`). The real executable, a real
/// mosquitto: whatever such a message holds (a valid report, a malformed payload, a key
/// nobody has, a topic without its room level), the key's hex never comes back out, neither
/// on any topic the bridge publishes, nor in its output, nor in /metrics.
@Suite("ESPresense irk: topics are never echoed")
struct IRKTopicEchoTests {
    static let irk = "ec0234a357c8ad05341010a60a397d9b"
    static let stranger = "00112233445566778899aabbccddeeff"

    @Test("valid, malformed and unknown irk: messages: the hex appears in no published payload, no output line, no metric")
    func neverEchoed() async throws {
        let executable = try ExecutableTests.executable
        let broker = try MosquittoBroker()
        let directory = try ExecutableTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try FreePort.find()
        let config = directory.appendingPathComponent("aabridge.yaml")
        let yaml = BridgeHarness.yaml(
            server: broker.url, database: directory.appendingPathComponent("aabridge.sqlite3").path,
            mqttExtra: "http:\n  listen: 127.0.0.1:\(port)\n", homeAssistant: true, headphonesIRK: Self.irk)
        // Debug: every rejection and notice is a log line the test can read.
        try yaml.replacingOccurrences(of: "level: error", with: "level: debug").write(to: config, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("bridge.log").path
        let observer = try await Observer(broker: broker, subscribe: ["#"])
        let bridge = try ChildProcess(path: executable, arguments: ["run", "--config", config.path], output: log)
        defer { bridge.stop(signal: SIGKILL) }
        await observer.waitFor("aabridge/bridge/state", timeout: .seconds(8)) { $0["state"] == "online" }

        let reversed = KeyByteOrderFlowTests.reversed(Self.irk)
        let keys = [Self.irk, reversed, Self.stranger]
        let report = #"{"mac":"4d5e6f708192","id":"irk:KEY","rssi@1m":-59,"rssi":-67.20,"distance":1.84}"#
        for key in keys {
            let upper = key.uppercased()
            let messages: [(String, String)] = [
                ("espresense/devices/irk:\(key)/kitchen", report.replacingOccurrences(of: "KEY", with: key)),
                ("espresense/devices/irk:\(upper)/hall", report.replacingOccurrences(of: "KEY", with: upper)),
                // Malformed payloads on a key's topic.
                ("espresense/devices/irk:\(key)/hall", #"{"mac":"not a mac","id":"irk:\#(key)","rssi":-70}"#),
                ("espresense/devices/irk:\(key)/hall", #"{"mac":"4d5e6f708193","rssi":"loud"}"#),
                ("espresense/devices/irk:\(key)/hall", "not json irk:\(key)"),
                ("espresense/devices/irk:\(key)/hall", ""),
                // No room level: the last level is the key itself.
                ("espresense/devices/irk:\(key)", report.replacingOccurrences(of: "KEY", with: key)),
                ("espresense/devices/irk:\(key)", #"{"mac":"bad"}"#),
                // Deeper than ESPresense publishes.
                ("espresense/devices/x/irk:\(key)", #"{"mac":"bad","id":"irk:\#(key)"}"#),
            ]
            for (topic, payload) in messages { try await observer.publish(topic, payload) }
        }
        _ = try await observer.request("health")
        _ = try await observer.request("health")
        let metrics = try await HTTPTestClient.fetch(port: port, "GET", "/metrics")
        #expect(metrics.status == 200)
        bridge.stop(signal: SIGTERM)
        _ = await bridge.wait(timeout: .seconds(15))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""

        func leaks(_ text: String) -> [String] {
            let lowered = text.lowercased()
            return keys.filter { lowered.contains($0) }
        }
        for message in observer.messages.elements where !message.topic.hasPrefix("espresense/") {
            #expect(leaks(message.topic).isEmpty, "published topic \(message.topic)")
            #expect(leaks(message.payloadString).isEmpty, "\(message.topic): \(message.payloadString)")
        }
        #expect(leaks(metrics.text).isEmpty, "/metrics: \(metrics.text)")
        #expect(leaks(output).isEmpty, "output: \(output)")
        // The rejections were reported (the test would pass vacuously otherwise), with the topic redacted.
        #expect(output.contains("hall"), "the malformed reports are logged: \(output)")
        #expect(observer.json(on: "aabridge/bridge/log").contains { ($0["message"]?.stringValue ?? "").contains("hall") })
    }
}
