import Configuration
import Foundation
import JSON
import TestSupport
import Testing

/// docs/examples/ha-companion-sources.yaml, the Home Assistant automation that feeds the
/// companion app's Bluetooth connections to aabridge as `source_connected` /
/// `source_disconnected`. Its templates are rendered with Jinja2 (the engine of Home
/// Assistant's templates, in its immutable sandbox) as Home Assistant runs them: the
/// automation's variables, the condition, the `changes` list, then the topic and payload of
/// each `mqtt.publish`, for before/after pairs of the sensor's attribute. The file is read
/// here, and docs/home-assistant.md must show it unchanged, so neither can drift.
@Suite(.enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
struct CompanionSourcesRecipeTests {
    static let path = "docs/examples/ha-companion-sources.yaml"
    static let airPods = "A1:B2:C3:D4:E5:F6 (Alice’s AirPods Pro)"
    static let watch = "12:34:56:78:9A:BC (Pixel Watch 2)"
    static let car = "F0:0D:F0:0D:F0:0D (Car Kit)"

    let text: String
    let automation: YAMLNode

    init() throws {
        text = try String(contentsOfFile: Repository.file(Self.path), encoding: .utf8)
        automation = try #require(try YAMLParser().parse(text))
    }

    /// What Home Assistant's state object of the sensor looks like to a template.
    static func state(_ devices: [String]?, state: String? = nil) -> JSONValue {
        guard let devices else { return ["state": .string(state ?? "unavailable"), "attributes": ["friendly_name": "Bluetooth"]] }
        return [
            "state": .string(state ?? String(devices.count)),
            "attributes": ["connected_paired_devices": .array(devices.map(JSONValue.string)), "friendly_name": "Bluetooth"],
        ]
    }

    /// One trigger: the sensor's state before (nil: the entity did not exist) and after.
    struct Case {
        var from: JSONValue?
        var to: JSONValue
    }

    /// Runs the automation for each case as Home Assistant would and returns, per case, nil
    /// when the condition stopped it, else the `(topic, payload)` of every publish in order.
    func run(_ cases: [Case], variables: [(String, JSONValue)]? = nil) throws -> [[(topic: String, payload: String)]?] {
        let actions = try #require(automation["actions"]?.sequence)
        let changes = try #require(actions.first?["variables"]?["changes"]?.scalar?.value)
        let repeatAction = try #require(actions.dropFirst().first?["repeat"])
        let forEach = try #require(repeatAction["for_each"]?.scalar?.value)
        let data = try #require(repeatAction["sequence"]?.sequence?.first?["data"])
        let condition = try #require(automation["conditions"]?.sequence?.first?["value_template"]?.scalar?.value)
        let spec: JSONValue = [
            "variables": .object(try variables ?? automationVariables()),
            "condition": .string(condition), "changes": .string(changes), "for_each": .string(forEach),
            "topic": .string(try #require(data["topic"]?.scalar?.value)),
            "payload": .string(try #require(data["payload"]?.scalar?.value)),
            "cases": .array(cases.map { ["from": $0.from ?? .null, "to": $0.to] }),
        ]
        // Home Assistant renders a template to text, then takes a text that is a Python literal
        // (a list, a dict, a number) as that value (its parse_result, with ast.literal_eval);
        // variables are rendered in order, each seeing those before; a template condition
        // passes when its text is "true" in any case.
        let script = """
            import ast, json, sys
            from jinja2.sandbox import ImmutableSandboxedEnvironment
            env = ImmutableSandboxedEnvironment()
            def native(text):
                try:
                    return ast.literal_eval(text)
                except Exception:
                    return text
            def render(template, context):
                return env.from_string(template).render(**context)
            spec = json.load(open(sys.argv[1]))
            results = []
            for case in spec["cases"]:
                context = {"trigger": {"platform": "state", "from_state": case["from"], "to_state": case["to"]}}
                for name, value in spec["variables"].items():
                    context[name] = native(render(value, context)) if isinstance(value, str) and "{" in value else value
                if render(spec["condition"], context).strip().lower() != "true":
                    results.append(None)
                    continue
                context["changes"] = native(render(spec["changes"], context))
                published = []
                for item in native(render(spec["for_each"], context)):
                    step = dict(context, repeat={"item": item})
                    published.append([render(spec["topic"], step), render(spec["payload"], step)])
                results.append(published)
            json.dump(results, open(sys.argv[2], "w"))
            """
        let results = try JSONParser.parse(try Jinja.run(script: script, input: spec.bytes))
        return (results.arrayValue ?? []).map { result in
            result.arrayValue?.map { pair in
                (pair.arrayValue?.first?.stringValue ?? "", pair.arrayValue?.last?.stringValue ?? "")
            }
        }
    }

    /// The automation's top-level variables, in order, as the file gives them: a scalar as
    /// text, a list of scalars as a list.
    func automationVariables() throws -> [(String, JSONValue)] {
        guard case .mapping(let entries)? = automation["variables"]?.content else { throw BrokerError("no variables mapping") }
        return try entries.map { entry in
            let name = try #require(entry.key.scalar?.value)
            switch entry.value.content {
            case .scalar(let scalar): return (name, .string(scalar.value))
            case .sequence(let items): return (name, .array(items.compactMap { $0.scalar.map { .string($0.value) } }))
            case .mapping: throw BrokerError("variable \(name) is a mapping")
            }
        }
    }

    static func set(_ id: String, _ key: String, phone: String = "11:22:33:44:55:66") -> (topic: String, payload: String) {
        ("aabridge/accessory/\(id)/set", #"{"\#(key)":"\#(phone)"}"#)
    }

    static func expect(
        _ result: [(topic: String, payload: String)]?, _ expected: [(topic: String, payload: String)]?,
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let got = result.map { $0.map { "\($0.topic) \($0.payload)" } }
        #expect(got == expected.map { $0.map { "\($0.topic) \($0.payload)" } }, "\(what)", sourceLocation: sourceLocation)
    }

    // MARK: -

    @Test("the shape Home Assistant needs: a state trigger on the attribute, mqtt.publish with QoS 1 and no retain")
    func shape() throws {
        let trigger = try #require(automation["triggers"]?.sequence?.first)
        #expect(trigger["trigger"]?.scalar?.value == "state")
        #expect(trigger["attribute"]?.scalar?.value == "connected_paired_devices")
        #expect(trigger["entity_id"]?.scalar?.value.hasSuffix("_bluetooth_connection") == true)
        let step = try #require(automation["actions"]?.sequence?.last?["repeat"]?["sequence"]?.sequence?.first)
        #expect(step["action"]?.scalar?.value == "mqtt.publish")
        #expect(step["data"]?["qos"]?.scalar?.value == "1")
        #expect(step["data"]?["retain"]?.scalar?.value == "false")
        // Quoted: unquoted, YAML 1.1 (Home Assistant's loader) reads 11:22:33:44:55:66 as a
        // base-60 number.
        let variables = try #require(automation["variables"])
        #expect(variables["phone"]?.scalar?.style == .doubleQuoted)
        #expect(variables["accessories"]?.sequence?.allSatisfy { $0.scalar?.style == .doubleQuoted } == true)
        #expect(automation["mode"]?.scalar?.value == "queued", "changes in a row are all sent, in order")
    }

    @Test("docs/home-assistant.md shows the example file unchanged, in its section")
    func documented() throws {
        let doc = try String(contentsOfFile: Repository.file("docs/home-assistant.md"), encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## Sources from the companion app").dropFirst().first)
        #expect(section.contains("```yaml\n\(text)```"), "the section's YAML block is \(Self.path), verbatim")
        #expect(section.contains(Self.path))
    }

    @Test("an accessory joining the list is connected, one leaving it disconnected; other devices are ignored")
    func connectsAndDisconnects() throws {
        let results = try run([
            Case(from: Self.state([Self.watch]), to: Self.state([Self.watch, Self.airPods])),
            Case(from: Self.state([Self.watch, Self.airPods]), to: Self.state([Self.watch])),
            Case(from: Self.state([Self.watch, Self.airPods]), to: Self.state([Self.airPods, Self.car])),
            Case(from: Self.state([]), to: Self.state([Self.car])),
        ])
        try #require(results.count == 4)
        Self.expect(results[0], [Self.set("A1B2C3D4E5F6", "source_connected")], "AirPods connected")
        Self.expect(results[1], [Self.set("A1B2C3D4E5F6", "source_disconnected")], "AirPods disconnected")
        Self.expect(results[2], [], "AirPods still connected, the watch and the car are no accessories")
        Self.expect(results[3], [], "a device aabridge does not know")
    }

    @Test("Home Assistant starting or the phone coming back reports what is connected; the phone going away says nothing")
    func unavailableAndRestarts() throws {
        let results = try run([
            Case(from: nil, to: Self.state([Self.airPods])),
            Case(from: Self.state(nil), to: Self.state([Self.airPods, Self.watch])),
            Case(from: Self.state([Self.airPods]), to: Self.state(nil)),
            Case(from: Self.state([Self.airPods]), to: Self.state(nil, state: "unknown")),
            // An entity without the attribute yet (the app not updated): nothing is known.
            Case(from: Self.state([Self.airPods]), to: ["state": "0", "attributes": [:]]),
        ])
        try #require(results.count == 5)
        Self.expect(results[0], [Self.set("A1B2C3D4E5F6", "source_connected")], "first state")
        Self.expect(results[1], [Self.set("A1B2C3D4E5F6", "source_connected")], "back from unavailable")
        Self.expect(results[2], nil, "unavailable: the condition stops it")
        Self.expect(results[3], nil, "unknown: the condition stops it")
        Self.expect(results[4], [Self.set("A1B2C3D4E5F6", "source_disconnected")], "an empty attribute is an empty list")
    }

    @Test("several accessories, written in any case and with dashes, change at once: each gets its own message, connections first")
    func severalAccessories() throws {
        var variables = try automationVariables()
        let index = try #require(variables.firstIndex { $0.0 == "accessories" })
        variables[index].1 = ["a1:b2:c3:d4:e5:f6", "C1-B2-C3-D4-E5-F6"]
        let speaker = "C1:B2:C3:D4:E5:F6 (Kitchen Speaker)"
        let results = try run(
            [
                Case(from: Self.state([speaker]), to: Self.state([Self.airPods.lowercased()])),
                Case(from: Self.state([]), to: Self.state([speaker, Self.airPods, speaker])),
            ], variables: variables)
        try #require(results.count == 2)
        Self.expect(
            results[0], [Self.set("A1B2C3D4E5F6", "source_connected"), Self.set("C1B2C3D4E5F6", "source_disconnected")],
            "the AirPods replace the speaker")
        Self.expect(
            results[1], [Self.set("C1B2C3D4E5F6", "source_connected"), Self.set("A1B2C3D4E5F6", "source_connected")],
            "both connected, each once, in the sensor's order")
    }

    @Test("every payload is the JSON the bridge reads: one key, the phone's address")
    func payloadsAreJSON() throws {
        let results = try run([Case(from: Self.state([Self.airPods]), to: Self.state([]))])
        let payload = try #require(results.first??.first?.payload)
        let value = try JSONParser.parse(payload)
        #expect(value == ["source_disconnected": "11:22:33:44:55:66"])
    }
}

extension YAMLNode {
    /// A mapping's value for `key`.
    fileprivate subscript(key: String) -> YAMLNode? {
        guard case .mapping(let entries) = content else { return nil }
        return entries.first { $0.key.scalar?.value == key }?.value
    }

    /// A sequence's items.
    fileprivate var sequence: [YAMLNode]? {
        guard case .sequence(let items) = content else { return nil }
        return items
    }
}
