import Foundation
import JSON
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// `GET /metrics`: Prometheus' text format 0.0.4, parsed here and checked by
/// Debian's `promtool check metrics`; counters that move with what the bridge does; never an
/// accessory's address or name.
@Suite("Prometheus metrics")
struct MetricsEndpointTests {
    /// One sample line: its name, labels and value.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses the exposition text strictly: every line a comment (`# HELP`/`# TYPE`) or a sample.
    static func parse(_ text: String) throws -> (types: [String: String], samples: [Sample]) {
        var types: [String: String] = [:]
        var samples: [Sample] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw BrokerError("bad TYPE line: \(line)") }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("# HELP ") { continue }
            var rest = Substring(line)
            let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }
            guard !name.isEmpty, !(name.first?.isNumber ?? true) else { throw BrokerError("bad metric name: \(line)") }
            rest = rest.dropFirst(name.count)
            var labels: [String: String] = [:]
            if rest.first == "{" {
                guard let close = rest.lastIndex(of: "}") else { throw BrokerError("unclosed labels: \(line)") }
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                for pair in inside.split(separator: ",") {
                    let halves = pair.split(separator: "=", maxSplits: 1)
                    guard halves.count == 2, halves[1].hasPrefix("\""), halves[1].hasSuffix("\"") else {
                        throw BrokerError("bad label: \(line)")
                    }
                    labels[String(halves[0])] = String(halves[1].dropFirst().dropLast())
                }
                rest = rest[rest.index(after: close)...]
            }
            guard rest.first == " ", let value = Double(rest.dropFirst()) ?? (rest.dropFirst() == "+Inf" ? .infinity : nil) else {
                throw BrokerError("bad value: \(line)")
            }
            samples.append(Sample(name: String(name), labels: labels, value: value))
        }
        return (types, samples)
    }

    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }?.value
    }

    @Test("The families of the issue, by Prometheus' conventions, moving with what the bridge does; no address or name as a label")
    func families() async throws {
        try await withConsole { _, observer, port in
            // Something for each counter: a gateway message, a refused one, a request of each
            // outcome, a commit.
            try await observer.publish(Fixture.advertisementTopic, Fixture.advertisementPayload)
            try await observer.publish("home/gw1/BTtoMQTT/F1E2D3C4B5A6", "not json")
            _ = try await observer.request("accessory/rename", #""id":"\#(Fixture.airPods)","name":"Metered AirPods""#)
            _ = try await observer.request("accessory/rename", #""id":"0A:0B:0C:0D:0E:0F","name":"x""#)
            _ = try await HTTPTestClient.fetch(port: port, "POST", "/api/request/health", body: Array("{}".utf8))
            _ = try await observer.request("no/such/request")
            // The re-attach form's press is answered like a request, and counted under its name.
            try await observer.publish("aabridge/bridge/reattach/set", #"{"transaction":"m","id":"0A:0B:0C:0D:0E:0F","lookalike":null}"#)
            await observer.waitFor("aabridge/bridge/response/reattach/set") { $0["transaction"] == "m" }
            await observer.waitFor("aabridge/bridge/health") { _ in true }
            try await Task.sleep(for: .milliseconds(200))

            let response = try await HTTPTestClient.fetch(port: port, "GET", "/metrics")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let (types, samples) = try Self.parse(response.text)
            let expected: [String: String] = [
                "aabridge_build_info": "gauge", "process_resident_memory_bytes": "gauge", "aabridge_uptime_seconds": "gauge",
                "aabridge_mqtt_connected": "gauge", "aabridge_mqtt_messages_received_total": "counter",
                "aabridge_mqtt_messages_sent_total": "counter", "aabridge_mqtt_reconnects_total": "counter",
                "aabridge_gateway_messages_total": "counter", "aabridge_telemetry_rejected_total": "counter",
                "aabridge_decisions_total": "counter", "aabridge_errors_total": "counter", "aabridge_requests_total": "counter",
                "aabridge_storage_commit_duration_seconds": "histogram", "aabridge_decision_duration_seconds": "histogram",
                "aabridge_accessories": "gauge", "aabridge_accessories_registered": "gauge", "aabridge_accessories_available": "gauge",
                "aabridge_gateways_online": "gauge", "aabridge_gateway_advertisements_total": "counter",
                "aabridge_gateway_advertisements_with_manufacturer_data_total": "counter",
                "aabridge_gateway_advertisements_attributed_total": "counter", "aabridge_gateway_names_left_out_total": "counter",
                "aabridge_gateway_problems": "gauge",
            ]
            for (name, type) in expected { #expect(types[name] == type, "\(name)") }
            for (name, type) in types {
                #expect(name.hasPrefix("aabridge_") || name.hasPrefix("process_"), "\(name)")
                #expect((type == "counter") == name.hasSuffix("_total"), "counters and only counters end in _total: \(name)")
            }
            #expect(Self.value(samples, "aabridge_build_info", ["version": BridgeModule.version]) == 1)
            #expect((Self.value(samples, "process_resident_memory_bytes") ?? 0) > 1_000_000)
            #expect(Self.value(samples, "aabridge_mqtt_connected") == 1)
            #expect(Self.value(samples, "aabridge_accessories") == 3)
            #expect(Self.value(samples, "aabridge_accessories_registered") == 1)
            #expect((Self.value(samples, "aabridge_gateway_messages_total", ["format": "openmqttgateway"]) ?? 0) >= 2)
            #expect(Self.value(samples, "aabridge_telemetry_rejected_total", ["reason": "invalidJSON"]) == 1)
            // Per configured entry (never per heard node): a stranger's advertisement, counted for nobody.
            #expect(Self.value(samples, "aabridge_gateway_advertisements_total", ["gateway": "omg"]) == 1)
            #expect(Self.value(samples, "aabridge_gateway_advertisements_with_manufacturer_data_total", ["gateway": "omg"]) == 1)
            #expect(Self.value(samples, "aabridge_gateway_advertisements_attributed_total", ["gateway": "omg"]) == 0)
            #expect(Self.value(samples, "aabridge_gateway_problems", ["gateway": "omg", "code": "no_manufacturer_data"]) == 0)
            #expect(Self.value(samples, "aabridge_gateway_names_left_out_total") == 0)
            #expect(Self.value(samples, "aabridge_requests_total", ["name": "accessory/rename", "status": "ok", "via": "mqtt"]) == 1)
            #expect(Self.value(samples, "aabridge_requests_total", ["name": "accessory/rename", "status": "error", "via": "mqtt"]) == 1)
            #expect(Self.value(samples, "aabridge_requests_total", ["name": "health", "status": "ok", "via": "http"]) == 1)
            #expect(Self.value(samples, "aabridge_requests_total", ["name": "other", "status": "error", "via": "mqtt"]) == 1)
            #expect(Self.value(samples, "aabridge_requests_total", ["name": "reattach/set", "status": "error", "via": "mqtt"]) == 1)
            #expect((Self.value(samples, "aabridge_errors_total", ["code": "invalidRequest"]) ?? 0) >= 1)
            #expect((Self.value(samples, "aabridge_storage_commit_duration_seconds_count") ?? 0) >= 1, "the rename was committed")
            #expect(
                Self.value(samples, "aabridge_storage_commit_duration_seconds_bucket", ["le": "+Inf"])
                    == Self.value(samples, "aabridge_storage_commit_duration_seconds_count"))

            // Never an accessory's address or name, in any form.
            let text = response.text
            for forbidden in [Fixture.airPods, Fixture.airPodsTopic, Fixture.advertisementID, "Metered AirPods", "Alice", "Bob's"] {
                #expect(!text.contains(forbidden), "\(forbidden) in /metrics")
            }
            #expect(text.range(of: #"([0-9A-F]{2}:){5}[0-9A-F]{2}"#, options: .regularExpression) == nil)

            try await Self.promtool(text)
        }
    }

    /// Debian's `promtool check metrics` on the text: it must say nothing (no lint finding).
    static func promtool(_ text: String) async throws {
        let promtool = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: promtool) else {
            // scripts/install-deps installs it (package prometheus); CI must not skip this.
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(promtool) is missing: run scripts/install-deps") }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-promtool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("metrics.txt")
        let output = directory.appendingPathComponent("promtool.txt")
        try text.write(to: input, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            path: "/bin/sh", arguments: ["-c", "\(promtool) check metrics < '\(input.path)' 2>&1"], output: output.path)
        let status = await child.wait(timeout: .seconds(60))
        let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(status == 0, "promtool: \(said)")
        #expect(said.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "promtool found: \(said)")
    }
}
