import AccessoryKit
import Bridge
import Foundation
import JSON
import TestSupport
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

/// Renders every template of the discovery payloads with Jinja2 (the engine Home Assistant's
/// templates run on, in its sandbox) against the payloads the bridge really publishes, and
/// checks what Home Assistant would receive. Skipped where python3-jinja2 is not installed.
@Suite(.enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
struct HomeAssistantTemplateTests {

    /// Renders `(template, payload)` pairs; `value_json` is the parsed payload, as in Home Assistant.
    static func render(_ cases: [(template: String, payload: JSONValue)]) throws -> [String] {
        let list = JSONValue.array(cases.map { ["template": .string($0.template), "payload": .string($0.payload.serialized)] })
        let script = """
            import json, sys
            from jinja2.sandbox import ImmutableSandboxedEnvironment
            env = ImmutableSandboxedEnvironment()
            env.policies["json.dumps_kwargs"] = {"sort_keys": False}
            out = []
            for case in json.load(open(sys.argv[1])):
                payload = case["payload"]
                try:
                    out.append(env.from_string(case["template"]).render(value=payload, value_json=json.loads(payload)))
                except Exception as error:
                    out.append("TEMPLATE ERROR: %r" % error)
            json.dump(out, open(sys.argv[2], "w"))
            """
        let rendered = try JSONParser.parse(try Jinja.run(script: script, input: list.bytes))
        return (rendered.arrayValue ?? []).compactMap(\.stringValue)
    }

    @Test("names from advertisements and users stay text in every template: JinjaLiteral round-trips through Jinja2")
    func literalsRoundTrip() throws {
        // Candidate names come from the air: whoever is near can advertise one, and it lands in
        // the discovery's templates. None may end a string or a block, or run as template code.
        let names = [
            #"Bob's "best" AirPods"#, "}} {{ 7*7 }} {% raw %}", #"back\slash\"#, "line\nbreak", "Åsa’s Kopfhörer 🎧",
            "{# comment #}", "' + 'x", #"\u007b"#,
        ]
        let cases = names.flatMap { name -> [(template: String, payload: JSONValue)] in
            let key = JinjaLiteral.string(name)
            let table = JinjaLiteral.dictionary([(key: name, value: "id-\(name)")])
            return [
                ("{{ \(key) }}", .null), ("{{ (\(table))[\(key)] }}", .null), ("{{ \(JinjaLiteral.list([name, "x"])) | first }}", .null),
            ]
        }
        let rendered = try Self.render(cases)
        #expect(rendered.count == cases.count)
        for (index, name) in names.enumerated() where index * 3 + 2 < rendered.count {
            #expect(rendered[index * 3] == name, "string literal of \(name)")
            #expect(rendered[index * 3 + 1] == "id-\(name)", "dictionary literal keyed by \(name)")
            #expect(rendered[index * 3 + 2] == name, "list literal of \(name)")
        }
    }

    /// Statuses covering nulls and every placement.
    var statuses: [AccessoryStatus] {
        var result = F.allStatuses
        for placement in AccessoryControlDevice.Placement.allCases {
            var status = F.fullStatus
            status.registration?.configuration.devicePlacement = placement
            status.worn = placement.isWorn
            result.append(status)
        }
        var noBattery = F.fullStatus
        noBattery.battery = nil
        noBattery.rssi = nil
        noBattery.worn = nil
        noBattery.routes = []
        result.append(noBattery)
        return result
    }

    /// A charging binary sensor's state: ON, OFF, or None (unknown) without a flag.
    static func onOff(_ flag: Bool?) -> String { flag.map { $0 ? "ON" : "OFF" } ?? "None" }

    @Test func accessoryTemplatesYieldWhatHomeAssistantAccepts() throws {
        let payloads = Payloads()
        for status in statuses {
            // Every battery part: entities stay when a level is missing (the tracker's sticky parts).
            let (_, discovery) = F.discovery.accessoryDevice(status, batteryParts: Set(HomeAssistantBatteryPart.allCases))
            let state = payloads.status(status)
            guard case .object(let components)? = discovery["components"] else { Issue.record("no components"); continue }
            let stateComponents = components.filter {
                $0.1["state_topic"]?.stringValue == F.discovery.topics.accessory(status.accessory.id)
            }
            var cases: [(template: String, payload: JSONValue)] = stateComponents.map { ($0.1["value_template"]!.stringValue!, state) }
            let attributeComponents = components.filter { $0.1["json_attributes_template"] != nil }
            cases += attributeComponents.map { ($0.1["json_attributes_template"]!.stringValue!, state) }
            let rendered = try Self.render(cases)
            try #require(rendered.count == cases.count)

            for ((id, component), output) in zip(stateComponents, rendered) {
                #expect(!output.contains("TEMPLATE ERROR"), "\(id): \(output)")
                let expected: String
                switch id {
                case "placement": expected = status.placement?.rawValue ?? "None"
                case "worn": expected = status.worn.map { $0 ? "ON" : "OFF" } ?? "None"
                case "primary_source":
                    expected = status.registration?.configuration.primaryAudioSourceDeviceIdentifier?.description ?? "none"
                case "secondary_source":
                    expected = status.registration?.configuration.secondaryAudioSourceDeviceIdentifier?.description ?? "none"
                case "routes": expected = String(status.routes.count)
                case "registration": expected = status.registrationState
                case "rssi": expected = status.rssi.map(String.init) ?? "None"
                case "last_error": expected = status.lastError?.code.rawValue ?? "none"
                case "room": expected = status.room ?? "None"
                case "address": expected = status.heardFrom?.description ?? "none"
                case "identity": expected = status.identity.rawValue
                case "battery": expected = status.battery?.main.map(String.init) ?? "None"
                case "battery_left": expected = status.battery?.left.map(String.init) ?? "None"
                case "battery_right": expected = status.battery?.right.map(String.init) ?? "None"
                case "battery_case": expected = status.battery?.chargingCase.map(String.init) ?? "None"
                case "battery_charging": expected = Self.onOff(status.battery?.charging)
                case "battery_left_charging": expected = Self.onOff(status.battery?.leftCharging)
                case "battery_right_charging": expected = Self.onOff(status.battery?.rightCharging)
                case "battery_case_charging": expected = Self.onOff(status.battery?.caseCharging)
                case "name": expected = status.accessory.displayName
                // Write-only: a key is never a state.
                case "irk", "encryption_key": expected = ""
                // The Home source select: the first home source by name (or address), else (none).
                case "preferred_source":
                    expected = status.homeSources.first.map { F.discovery.sourceNames[$0] ?? $0.description } ?? "(none)"
                // The presence tracker: home while available.
                case "presence": expected = status.available ? "home" : "not_home"
                case "home_source_address": expected = status.homeSources.first?.description ?? ""
                case "alias": expected = status.alias?.description ?? ""
                default: expected = "unexpected component \(id)"
                }
                #expect(output == expected, "\(id) of \(status.accessory.displayName)")
                // An enum sensor only ever gets one of its options, or None (unknown).
                if let options = component["options"]?.arrayValue?.compactMap(\.stringValue) {
                    #expect(options.contains(output) || output == "None", "\(id): \(output)")
                }
            }
            for ((id, _), output) in zip(attributeComponents, rendered.dropFirst(stateComponents.count)) {
                let attributes = try JSONParser.parse(output)
                guard case .object = attributes else { Issue.record("\(id) attributes are not an object: \(output)"); continue }
                if id == "routes" { #expect(attributes["routes"] == state["routes"]) }
                if id == "address" {
                    #expect(
                        attributes
                            == [
                                "identity": .string(status.identity.rawValue), "irk": .bool(status.keys.irk),
                                "encryption_key": .bool(status.keys.encryptionKey),
                            ])
                }
                if id == "presence" {
                    #expect(attributes == ["room": state["room"] ?? .null, "gateway": state["gateway"] ?? .null])
                }
                if id == "last_error" {
                    // No error: an empty object (JSONValue's nil literal is `null`, so spell it out).
                    let lastError = state["last_error"] ?? .null
                    #expect(attributes == (lastError.isNull ? .object([]) : lastError))
                }
            }
        }
    }

    @Test func decisionTemplateYieldsAnEventObject() throws {
        let (_, discovery) = F.discovery.accessoryDevice(F.fullStatus)
        let event = try #require(discovery["components"]?["decision"])
        let template = try #require(event["value_template"]?.stringValue)
        let decisions = [
            Decision(action: .route, accessory: F.budsID, source: F.phone, reason: .placement(.inEar), placement: .inEar),
            Decision(action: .release, accessory: F.budsID, source: F.tv, reason: .unavailable, placement: nil),
        ]
        let payloads = Payloads(sourceNames: [F.phone: "Alice's \"iPhone\""])
        let published = decisions.map { payloads.decision($0, at: Timestamp(milliseconds: 1_780_000_000_000)) }
        let rendered = try Self.render(published.map { (template, $0) })
        for (output, payload) in zip(rendered, published) {
            let object = try JSONParser.parse(output)
            #expect(object["event_type"] == payload["action"])
            #expect(event["event_types"]?.arrayValue?.contains(try #require(object["event_type"])) == true)
            for key in ["source", "source_name", "reason", "placement", "at"] { #expect(object[key] == payload[key], "\(key)") }
        }
    }

    @Test func availabilityAndBridgeTemplates() throws {
        let payloads = Payloads()
        let (_, accessory) = F.discovery.accessoryDevice(F.fullStatus)
        let availability = try #require(accessory["components"]?["rssi"]?["availability"]?.arrayValue)
        let (_, bridge) = F.discovery.bridgeDevice()
        let connection = try #require(bridge["components"]?["connection"])
        let picker = try #require(bridge["components"]?["picker"])
        var cases: [(template: String, payload: JSONValue)] = []
        for entry in availability {
            let template = try #require(entry["value_template"]?.stringValue)
            cases += [(template, payloads.availability(true)), (template, payloads.availability(false))]
        }
        cases.append((try #require(connection["value_template"]?.stringValue), ["state": "offline"]))
        cases.append((try #require(picker["value_template"]?.stringValue), payloads.picker(nil)))
        cases.append((try #require(picker["json_attributes_template"]?.stringValue), payloads.picker(nil)))
        let rendered = try Self.render(cases)
        #expect(Array(rendered.prefix(4)) == ["online", "offline", "online", "offline"])
        #expect(rendered[4] == connection["payload_off"]?.stringValue)
        #expect(rendered[5] == "idle")
        #expect(try JSONParser.parse(rendered[6])["candidates"] == [])
    }

    @Test("the presence tracker and the Room sensor: home while available, rooms: names, unmapped nodes keep theirs")
    func presenceAndRooms() throws {
        let discovery = HomeAssistantDiscovery(
            baseTopic: "aabridge", products: [F.buds], rooms: ["esp32-3f2a": "Kitchen", #"q"}}"#: "Den {{ x }}"],
            version: BridgeModule.version)
        let components = try #require(discovery.accessoryDevice(F.fullStatus).payload["components"])
        let state = try #require(components["presence"]?["value_template"]?.stringValue)
        let attributes = try #require(components["presence"]?["json_attributes_template"]?.stringValue)
        let room = try #require(components["room"]?["value_template"]?.stringValue)
        let heard: JSONValue = ["available": true, "room": "esp32-3f2a", "gateway": "esp32-3f2a"]
        let unmapped: JSONValue = ["available": true, "room": "hall", "gateway": "hall"]
        let hostile: JSONValue = ["available": true, "room": #"q"}}"#, "gateway": "q"]
        let away: JSONValue = ["available": false, "room": .null, "gateway": "hall"]
        let rendered = try Self.render([
            (state, heard), (state, away),
            (attributes, heard), (attributes, unmapped), (attributes, hostile), (attributes, away),
            (room, heard), (room, unmapped), (room, away),
        ])
        try #require(rendered.count == 9)
        #expect(rendered[0] == "home")
        #expect(rendered[1] == "not_home")
        #expect(try JSONParser.parse(rendered[2]) == ["room": "Kitchen", "gateway": "esp32-3f2a"])
        #expect(try JSONParser.parse(rendered[3]) == ["room": "hall", "gateway": "hall"])
        #expect(try JSONParser.parse(rendered[4])["room"] == "Den {{ x }}")
        #expect(try JSONParser.parse(rendered[5]) == ["room": .null, "gateway": "hall"])
        #expect(rendered[6] == "Kitchen")
        #expect(rendered[7] == "hall")
        #expect(rendered[8] == "None")
    }
}
