import Bridge
import Configuration
import JSON
import MQTT
import Telemetry

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

/// `aabridge simulate --config PATH --scenario FILE`: publishes a recorded scenario of
/// gateway messages (and requests) to the configured broker, with its timings.
///
/// A scenario is JSON lines: `{"delay_ms": 500, "topic": "...", "payload": {...} | "text"}`;
/// `delay_ms` (optional, a whole number, 0 or more) is waited before the line is published;
/// `payload` is required: an object or array is sent as compact JSON, a string as its text.
/// Any other key or type is refused with file:line, before anything is published. Blank
/// lines and lines starting with `#` or `//` are skipped.
enum SimulateCommand {
    static let scenario = CommandOption("--scenario", value: "FILE", help: "the scenario of gateway messages to publish")

    struct Step {
        var line: Int
        var delayMilliseconds: Int
        var topic: String
        var payload: [UInt8]
    }

    static func run(options: CommandArguments) async -> Int32 {
        guard let scenario = options["--scenario"] else {
            printError("aabridge simulate: --scenario FILE is required")
            return 2
        }
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        let steps: [Step]
        do {
            steps = try parse(scenario: scenario)
        } catch {
            printError("aabridge simulate: \(error.message)")
            return 2
        }
        do {
            var client = try BridgeRuntime.clientConfiguration(configuration, topics: Topics(base: configuration.mqtt.baseTopic))
            client.clientID = "aabridge-simulate-\(getpid())"
            client.will = nil
            let mqtt = try MQTTClient(configuration: client)
            try await mqtt.connect()
            for step in steps {
                if step.delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(step.delayMilliseconds)) }
                try await mqtt.publishAcknowledged(topic: step.topic, payload: step.payload, qos: .atLeastOnce)
                print("published \(step.topic) \(String(decoding: step.payload, as: UTF8.self))")
            }
            await mqtt.disconnect()
            return 0
        } catch let error as MQTTError {
            printError("aabridge simulate: \(error.message)")
            return 1
        } catch {
            printError("aabridge simulate: \(error)")
            return 1
        }
    }

    struct ScenarioError: Error {
        let message: String
    }

    static func parse(scenario path: String) throws(ScenarioError) -> [Step] {
        // Bounded like every file a command names (a scenario is a few hundred lines).
        let text: String
        switch BoundedFile.read(path, limit: 16 << 20) {
        case .success(let bytes):
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw ScenarioError(message: "cannot read scenario file '\(path)': not UTF-8 text")
            }
            text = decoded
        case .failure(let problem): throw ScenarioError(message: "cannot read scenario file '\(path)': \(problem)")
        }
        var steps: [Step] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine.trimmingWhitespace)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("//") { continue }
            let location = "\(path):\(index + 1)"
            let value: JSONValue
            do {
                value = try JSONParser.parse(line)
            } catch {
                throw ScenarioError(message: "\(location): \(error.description)")
            }
            guard case .object(let fields) = value else {
                throw ScenarioError(message: "\(location): a line must be an object {\"delay_ms\": ..., \"topic\": ..., \"payload\": ...}")
            }
            if let unknown = fields.first(where: { !["delay_ms", "topic", "payload"].contains($0.0) }) {
                throw ScenarioError(message: "\(location): unknown key '\(unknown.0)'; allowed: delay_ms, topic, payload")
            }
            guard let topic = value["topic"]?.stringValue, !topic.isEmpty, !topic.contains("+"), !topic.contains("#") else {
                throw ScenarioError(message: "\(location): 'topic' must be a topic name without wildcards")
            }
            var delay = 0
            if let field = value["delay_ms"] {
                guard let milliseconds = field.intValue, milliseconds >= 0 else {
                    throw ScenarioError(message: "\(location): 'delay_ms' must be a whole number of milliseconds, 0 or more")
                }
                delay = milliseconds
            }
            let payload: [UInt8]
            switch value["payload"] {
            case .string(let text)?: payload = Array(text.utf8)
            case let object? where object.isObjectOrArray: payload = object.bytes
            case nil:
                throw ScenarioError(message: "\(location): 'payload' is missing (an object, or a string; \"\" for an empty payload)")
            case _?:
                throw ScenarioError(message: "\(location): 'payload' must be an object, an array or a string")
            }
            steps.append(Step(line: index + 1, delayMilliseconds: delay, topic: topic, payload: payload))
        }
        return steps
    }
}

extension JSONValue {
    fileprivate var isObjectOrArray: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }
}
