import Foundation
import JSON
import TestSupport
import Testing

/// Home Assistant's MQTT integration as far as aabridge's controls need it, on a real broker:
/// it knows only what the retained device-based discovery configs say (`homeassistant/device/
/// <object id>/config`), and uses them as Home Assistant does.
///
/// - a button publishes its `payload_press` to its `command_topic`;
/// - a select or text renders its `command_template` with Jinja2 (`value` = the option or the
///   text) and publishes the result to its `command_topic`; a select refuses an option its
///   discovery does not list, a text a value outside `min`/`max` (Home Assistant's service
///   call does), unless the caller bypasses that to reach the bridge's own checks;
/// - a state is the `value_template` rendered against the last message on the `state_topic`
///   (`value` the payload, `value_json` it parsed), attributes likewise.
///
/// Rendering runs python3's Jinja2 in its immutable sandbox, as Home Assistant does.
struct SimulatedHomeAssistant {
    let observer: Observer
    var discoveryPrefix = "homeassistant"

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    func configTopic(_ objectID: String) -> String { "\(discoveryPrefix)/device/\(objectID)/config" }

    /// The device's discovery config as last published (nil when none, or cleared).
    func device(_ objectID: String) -> JSONValue? {
        guard let last = observer.messages(on: configTopic(objectID)).last, !last.payload.isEmpty else { return nil }
        return try? JSONParser.parse(last.payload)
    }

    /// Waits until the device's discovery satisfies `condition` (republished discovery).
    @discardableResult
    func waitForDevice(
        _ objectID: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: @escaping (JSONValue) -> Bool = { _ in true }
    ) async -> JSONValue? {
        await observer.waitFor(configTopic(objectID), sourceLocation: sourceLocation) { !$0.isNull && condition($0) }
    }

    func component(_ objectID: String, _ id: String) throws -> JSONValue {
        guard let component = device(objectID)?["components"]?[id] else { throw Refused(description: "no component \(id) on \(objectID)") }
        return component
    }

    /// Presses a button.
    func press(_ objectID: String, _ id: String) async throws {
        let button = try component(objectID, id)
        guard button["platform"] == "button", let topic = button["command_topic"]?.stringValue else {
            throw Refused(description: "\(id) is not a button")
        }
        let press = button["payload_press"]?.stringValue ?? "PRESS"
        try await publish(button, topic: topic, value: press)
    }

    /// Chooses an option of a select.
    func select(_ objectID: String, _ id: String, option: String) async throws {
        let select = try component(objectID, id)
        guard select["platform"] == "select", let topic = select["command_topic"]?.stringValue else {
            throw Refused(description: "\(id) is not a select")
        }
        let options = select["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard options.contains(option) else { throw Refused(description: "'\(option)' is not an option of \(id): \(options)") }
        try await publish(select, topic: topic, value: option)
    }

    /// Sets a text. `checkLength` false skips Home Assistant's own min/max check, to reach the
    /// bridge's (an automation publishing to the topic directly, or an older entity).
    func type(_ objectID: String, _ id: String, _ text: String, checkLength: Bool = true) async throws {
        let entity = try component(objectID, id)
        guard entity["platform"] == "text", let topic = entity["command_topic"]?.stringValue else {
            throw Refused(description: "\(id) is not a text")
        }
        let minimum = entity["min"]?.intValue ?? 0, maximum = entity["max"]?.intValue ?? 255
        if checkLength && !(minimum...maximum).contains(text.count) {
            throw Refused(description: "\(id) takes \(minimum)-\(maximum) characters, not \(text.count)")
        }
        try await publish(entity, topic: topic, value: text)
    }

    /// The entity's state: its value template on the last message of its state topic (nil
    /// before any).
    func state(_ objectID: String, _ id: String) throws -> String? {
        let entity = try component(objectID, id)
        guard let topic = entity["state_topic"]?.stringValue, let last = observer.messages(on: topic).last else { return nil }
        let payload = String(decoding: last.payload, as: UTF8.self)
        guard let template = entity["value_template"]?.stringValue else { return payload }
        return try Self.render(template, value: payload, json: true)
    }

    /// The entity's attributes from its `json_attributes_topic` and template.
    func attributes(_ objectID: String, _ id: String) throws -> JSONValue? {
        let entity = try component(objectID, id)
        guard let topic = entity["json_attributes_topic"]?.stringValue, let last = observer.messages(on: topic).last else { return nil }
        let payload = String(decoding: last.payload, as: UTF8.self)
        guard let template = entity["json_attributes_template"]?.stringValue else { return try JSONParser.parse(payload) }
        return try JSONParser.parse(try Self.render(template, value: payload, json: true))
    }

    /// Publishes a command as Home Assistant's MQTT entity does: the command template rendered
    /// with `value`, or the value itself; QoS and retain from the config (0 and false).
    private func publish(_ entity: JSONValue, topic: String, value: String) async throws {
        var payload = value
        if let template = entity["command_template"]?.stringValue { payload = try Self.render(template, value: value, json: false) }
        try await observer.client.publishAcknowledged(
            topic: topic, string: payload, qos: .atLeastOnce, retain: entity["retain"]?.boolValue ?? false)
    }

    /// Renders one template with Jinja2's sandbox: `value`, and with `json` also `value_json`.
    static func render(_ template: String, value: String, json: Bool) throws -> String {
        let input = JSONValue.object([("template", .string(template)), ("value", .string(value)), ("json", .bool(json))])
        let script = """
            import json, sys
            from jinja2.sandbox import ImmutableSandboxedEnvironment
            env = ImmutableSandboxedEnvironment()
            case = json.load(open(sys.argv[1]))
            variables = {"value": case["value"]}
            if case["json"]:
                try:
                    variables["value_json"] = json.loads(case["value"])
                except ValueError:
                    pass
            open(sys.argv[2], "w").write(env.from_string(case["template"]).render(**variables))
            """
        do {
            return String(decoding: try Jinja.run(script: script, input: input.bytes), as: UTF8.self)
        } catch {
            throw Refused(description: "template error in \(template): \(error)")
        }
    }
}
