import Bridge
import Configuration
import JSON
import MQTT

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `aabridge healthcheck [--config PATH]`: exit 0 only when the broker is reachable, the
/// bridge's retained `bridge/state` is online and its `bridge/health` is fresher than three
/// health intervals; otherwise one line saying why, and exit 1. For Docker's HEALTHCHECK and
/// systemd watchdogs: it judges the running bridge from the outside, as a user would.
enum HealthcheckCommand {
    static func run(options: CommandArguments) async -> Int32 {
        let path = options.configurationPath
        let configuration: BridgeConfiguration
        switch ConfigurationLoader.load(path: path) {
        case .success(let loaded): configuration = loaded
        case .failure(let errors):
            printError("unhealthy: invalid configuration: \(errors.issues.first.map { "\($0)" } ?? "")")
            return 2
        }
        let topics = Topics(base: configuration.mqtt.baseTopic)
        let verdict = await check(configuration: configuration, topics: topics)
        switch verdict {
        case .success(let summary):
            print("healthy: \(summary)")
            return 0
        case .failure(let reason):
            printError("unhealthy: \(reason.message)")
            return 1
        }
    }

    struct Reason: Error {
        let message: String
    }

    static func check(configuration: BridgeConfiguration, topics: Topics) async -> Result<String, Reason> {
        let mqtt: MQTTClient
        switch await CommandClient.connect(configuration, topics: topics, role: "healthcheck") {
        case .success(let client): mqtt = client
        case .failure(let failure): return .failure(Reason(message: failure.message))
        }
        var state: JSONValue?
        var health: JSONValue?
        let waiter = Task {
            var state: JSONValue?
            var health: JSONValue?
            for await message in mqtt.messages {
                if message.topic == topics.bridgeState { state = try? JSONParser.parse(message.payload) }
                if message.topic == topics.bridgeHealth { health = try? JSONParser.parse(message.payload) }
                if state != nil && health != nil { break }
            }
            return (state, health)
        }
        do {
            try await mqtt.subscribe(topics.bridgeState)
            try await mqtt.subscribe(topics.bridgeHealth)
        } catch {
            waiter.cancel()
            await mqtt.disconnect()
            return .failure(Reason(message: "cannot subscribe: \(error.message)"))
        }
        // Retained messages arrive right after the SUBACK; give them a moment.
        let timeout = Task {
            try? await Task.sleep(for: .seconds(3))
            await mqtt.disconnect()
        }
        (state, health) = await waiter.value
        timeout.cancel()
        await mqtt.disconnect()
        guard let state else {
            return .failure(Reason(message: "no retained \(topics.bridgeState): the bridge never ran against this broker"))
        }
        guard state["state"]?.stringValue == "online" else {
            return .failure(Reason(message: "\(topics.bridgeState) is \(state["state"]?.stringValue ?? "unknown")"))
        }
        guard let health, let at = health["at"]?.stringValue, let time = parseTime(at) else {
            return .failure(Reason(message: "no usable \(topics.bridgeHealth)"))
        }
        let age = Date().timeIntervalSince1970 - time
        let limit = Double(configuration.health.intervalSeconds * 3)
        guard age <= limit else {
            return .failure(
                Reason(message: "\(topics.bridgeHealth) is \(Int(age)) s old (limit \(Int(limit)) s): the bridge is stuck or gone"))
        }
        return .success("online, health \(Int(age)) s old, uptime \(health["uptime_s"]?.intValue ?? 0) s")
    }

    /// Parses the bridge's own `2026-11-29T10:15:30.123Z` format into seconds since 1970.
    static func parseTime(_ text: String) -> Double? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))?.timeIntervalSince1970
    }
}
