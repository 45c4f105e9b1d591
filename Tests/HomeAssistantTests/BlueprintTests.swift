import AccessoryKit
import Bridge
import Configuration
import Foundation
import JSON
import TestSupport
import Testing

private typealias F = HomeAssistantFixtures

/// The Home Assistant blueprints under config/homeassistant/blueprints: read with the
/// project's YAML parser (libyaml keeps Home Assistant's `!input` tag on a scalar), checked for
/// what Home Assistant requires of a blueprint, and run by `AutomationRunner` (their templates
/// rendered by Jinja2 in the immutable sandbox, as Home Assistant does) against the payloads the
/// bridge publishes: built by its own serializer (`Payloads`) and taken from docs/mqtt-api.md.
@Suite struct BlueprintTests {
    static let directory = "config/homeassistant/blueprints/automation/aabridge"
    static let files = [
        "pause_media_when_headphones_off.yaml", "route_media_player.yaml", "companion_app_sources.yaml", "notify_accessory_errors.yaml",
    ]

    /// Every `.yaml` file under config/homeassistant/blueprints, relative to the repository.
    static func blueprintPaths() throws -> [String] {
        let root = Repository.file("config/homeassistant/blueprints")
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
            .map { "config/homeassistant/blueprints/\($0)" }
    }

    static func load(_ path: String) throws -> YAMLNode {
        let text = try String(contentsOfFile: Repository.file(path), encoding: .utf8)
        return try #require(try YAMLParser().parse(text), "\(path) is empty")
    }

    static func blueprint(_ name: String) throws -> YAMLNode { try load("\(directory)/\(name)") }

    /// Every scalar of a document with where it is.
    static func scalars(_ node: YAMLNode) -> [(YAMLNode.Scalar, YAMLNode.Origin)] {
        switch node.content {
        case .scalar(let scalar): return [(scalar, node.origin)]
        case .sequence(let items): return items.flatMap(scalars)
        case .mapping(let entries): return entries.flatMap { scalars($0.key) + scalars($0.value) }
        }
    }

    // MARK: - Shape

    @Test("the shipped blueprints are the four automation blueprints and the script blueprint")
    func theFiles() throws {
        // And the script blueprint of docs/sources.md, "An iPhone", which the real-HA suite runs.
        let script = "config/homeassistant/blueprints/script/aabridge/source_connected.yaml"
        #expect(try Self.blueprintPaths() == (Self.files.map { "\(Self.directory)/\($0)" } + [script]).sorted())
    }

    @Test("each has the header Home Assistant requires, and no source_url (there is no public repository to point at)", arguments: files)
    func header(_ name: String) throws {
        let document = try Self.blueprint(name)
        let header = try #require(document["blueprint"])
        #expect(header["name"]?.scalar?.value.hasPrefix("aabridge - ") == true)
        #expect((header["description"]?.scalar?.value.count ?? 0) > 80, "a description says what it does")
        #expect(header["domain"]?.scalar?.value == "automation")
        // A source_url is where Home Assistant re-imports the blueprint from; one pointing at a
        // repository that does not exist makes "Re-import blueprint" fail. Imported from the file.
        #expect(header["source_url"] == nil)
        let inputs = try #require(header["input"]?.entries)
        #expect(!inputs.isEmpty)
        for entry in inputs {
            let input = entry.value
            let id = entry.key.scalar?.value ?? "?"
            #expect(input["name"]?.scalar != nil, "\(id) has a name")
            #expect(input["description"]?.scalar != nil, "\(id) has a description")
            let selector = try #require(input["selector"]?.entries, "\(id) has a selector")
            #expect(selector.count == 1, "\(id): one selector")
        }
        let keys = try #require(document.entries).compactMap(\.key.scalar?.value)
        for required in ["blueprint", "triggers", "actions", "mode"] { #expect(keys.contains(required), "\(name): \(required)") }
        for key in keys {
            let known = ["blueprint", "trigger_variables", "triggers", "conditions", "variables", "actions", "mode", "max"]
            #expect(known.contains(key), "\(name): \(key)")
        }
    }

    @Test("every !input names a declared input, and every input is used", arguments: files)
    func inputsAreDeclaredAndUsed(_ name: String) throws {
        let document = try Self.blueprint(name)
        let declared = Set(try #require(document["blueprint"]?["input"]?.entries).compactMap(\.key.scalar?.value))
        var used: Set<String> = []
        for (scalar, origin) in Self.scalars(document) {
            guard let tag = scalar.tag else { continue }
            #expect(tag == "!input", "\(name), \(origin): only Home Assistant's !input tag")
            #expect(declared.contains(scalar.value), "\(name), \(origin): !input \(scalar.value) is not declared")
            used.insert(scalar.value)
        }
        #expect(used == declared, "\(name): declared \(declared.sorted()), used \(used.sorted())")
    }

    @Test("no plain scalar means something else to Home Assistant's YAML 1.1 loader", arguments: files)
    func yaml11(_ name: String) throws {
        // YAML 1.1 reads yes/no/on/off as booleans and 11:22:33 as a base-60 number.
        let booleans: Set = ["y", "yes", "n", "no", "on", "off"]
        for (scalar, origin) in Self.scalars(try Self.blueprint(name)) where scalar.style == .plain && scalar.tag == nil {
            #expect(!booleans.contains(scalar.value.lowercased()), "\(name), \(origin): \(scalar.value)")
            #expect(scalar.value.wholeMatch(of: /[0-9]+(:[0-5]?[0-9])+/) == nil, "\(name), \(origin): \(scalar.value)")
        }
    }

    // MARK: - docs/home-assistant.md

    @Test("docs/home-assistant.md's Blueprints section links each file with its import link and names its inputs", arguments: files)
    func documented(_ name: String) throws {
        let doc = try String(contentsOfFile: Repository.file("docs/home-assistant.md"), encoding: .utf8)
        let section = try #require(
            doc.components(separatedBy: "\n## Blueprints\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let path = "\(Self.directory)/\(name)"
        #expect(section.contains("(../\(path))"), "a link to \(path)")
        // Imported from the file: the section says where to copy it, and links no import URL.
        #expect(section.contains("cp \(path) <config>/blueprints/automation/aabridge/"), "how to import \(name) from the file")
        #expect(!section.contains("blueprint_import"))
        let document = try Self.blueprint(name)
        for entry in try #require(document["blueprint"]?["input"]?.entries) {
            let inputName = try #require(entry.value["name"]?.scalar?.value)
            #expect(section.contains(inputName), "\(name): the input \(inputName) is described")
        }
        // The section shows no YAML of its own: the files are the blueprints.
        #expect(!section.contains("```yaml"))
    }
}

// MARK: - Behaviour

extension BlueprintTests {
    /// The blueprints run against the bridge's payloads; skipped where python3-jinja2 is missing.
    @Suite(.enabled(if: Jinja.testsEnabled, "needs python3 with jinja2"))
    struct Behaviour {
        static let at = Timestamp(milliseconds: 1_780_000_000_000)
        static let payloads = Payloads(sourceNames: [F.tv: "Living room TV", F.phone: "Alice's iPhone"])
        static let bob = BluetoothAddress("D0:C3:D2:A1:B2:C3")!

        static func object(_ state: String, name: String? = nil, attributes: JSONValue = [:]) -> JSONValue {
            ["state": .string(state), "attributes": attributes, "name": .string(name)]
        }

        // MARK: Pause

        @Test("pause: the worn sensor turning off pauses the players that play, the placement sensor going offHead too")
        func pause() throws {
            let blueprint = try BlueprintTests.blueprint("pause_media_when_headphones_off.yaml")
            let worn = "binary_sensor.alice_s_airpods_worn"
            let placement = "sensor.alice_s_airpods_placement"
            let states: [(String, JSONValue)] = [
                ("media_player.living_room_tv", Self.object("playing")), ("media_player.kitchen", Self.object("paused")),
            ]
            let pause = { (player: String) in
                AutomationRunner.Call(action: "media_player.media_pause", target: ["entity_id": .string(player)], data: [:])
            }
            let inputs: [(String, JSONValue)] = [
                ("wear_entity", .string(worn)), ("media_players", ["media_player.living_room_tv", "media_player.kitchen"]),
            ]
            let outcomes = try AutomationRunner.run(
                blueprint, inputs: inputs, states: states,
                events: [
                    AutomationRunner.state(worn, from: Self.object("on"), to: Self.object("off")),
                    AutomationRunner.state(worn, from: Self.object("off"), to: Self.object("on")),
                    AutomationRunner.state(worn, from: Self.object("unavailable"), to: Self.object("off")),
                    AutomationRunner.state(worn, from: Self.object("on"), to: Self.object("unavailable")),
                    AutomationRunner.state(worn, from: nil, to: Self.object("off")),
                    AutomationRunner.state(placement, from: Self.object("inEar"), to: Self.object("offHead")),
                ])
            try #require(outcomes.count == 6)
            for outcome in outcomes { #expect(outcome.error == nil, "\(outcome.error ?? "")") }
            #expect(outcomes[0].calls == [pause("media_player.living_room_tv")], "only the player that plays")
            #expect(outcomes[1].fired && !outcomes[1].passed, "put on: nothing")
            #expect(!outcomes[2].fired, "back from unavailable: no trigger")
            #expect(!outcomes[3].fired, "out of range: no trigger")
            #expect(outcomes[4].fired && !outcomes[4].passed, "a new entity: nothing")
            #expect(!outcomes[5].fired, "another entity")

            // The Placement sensor, and one player given as a single entity id.
            let placementOutcomes = try AutomationRunner.run(
                blueprint, inputs: [("wear_entity", .string(placement)), ("media_players", "media_player.living_room_tv")], states: states,
                events: [
                    AutomationRunner.state(placement, from: Self.object("inEar"), to: Self.object("offHead")),
                    AutomationRunner.state(placement, from: Self.object("overTheEar"), to: Self.object("offHead")),
                    AutomationRunner.state(placement, from: Self.object("inEar"), to: Self.object("onHead")),
                    AutomationRunner.state(placement, from: Self.object("offHead"), to: Self.object("inEar")),
                ])
            try #require(placementOutcomes.count == 4)
            #expect(placementOutcomes[0].calls == [pause("media_player.living_room_tv")])
            #expect(placementOutcomes[1].calls == [pause("media_player.living_room_tv")])
            #expect(placementOutcomes[2].calls.isEmpty, "still worn")
            #expect(placementOutcomes[3].calls.isEmpty, "put on")
        }

        // MARK: Route

        /// The route the bridge publishes for the TV, built by its serializer.
        static func route(_ target: RouteTarget, reason: DecisionReason, accessoryName: String? = nil) -> (topic: String, payload: String) {
            let change = RouteChange(source: F.tv, previous: .fallback, target: target, reason: reason)
            return (Topics(base: "aabridge").sourceRoute(F.tv), payloads.route(change, accessoryName: accessoryName, at: at).serialized)
        }

        static let routeInputs: [(String, JSONValue)] = [
            ("source", "11:22:33:44:55:88"), ("media_player", "media_player.living_room_tv"),
            // Keys as people write them: any case, `-` or `:`.
            ("outputs", ["a1:b2:c3:d4:e5:f6": "Alice's AirPods", "D0-C3-D2-A1-B2-C3": "Bob's headphones"]),
            ("fallback_output", "TV Speaker"),
        ]

        static func select(_ source: String) -> AutomationRunner.Call {
            AutomationRunner.Call(
                action: "media_player.select_source", target: ["entity_id": "media_player.living_room_tv"],
                data: ["source": .string(source)])
        }

        @Test("route: the source's route selects the accessory's source, fallback the player's own, an unlisted accessory nothing")
        func route() throws {
            let blueprint = try BlueprintTests.blueprint("route_media_player.yaml")
            let tvSpeaker: [(String, JSONValue)] = [
                ("media_player.living_room_tv", Self.object("on", attributes: ["source": "TV Speaker", "source_list": ["TV Speaker"]]))
            ]
            let routes = [
                Self.route(.accessory(F.budsID), reason: .placement(.inEar), accessoryName: "Alice's AirPods"),
                Self.route(.accessory(Self.bob), reason: .otherAccessoryReleased, accessoryName: "Bob's Headphones"),
                Self.route(.fallback, reason: .placement(.offHead)),
                Self.route(.accessory(F.studioID), reason: .sourceConnected, accessoryName: "Studio"),
                Self.route(.fallback, reason: .startup),
            ]
            let outcomes = try AutomationRunner.run(
                blueprint, inputs: Self.routeInputs, states: tvSpeaker,
                events: routes.map { AutomationRunner.mqtt($0.topic, $0.payload) } + [
                    // Another source's route, and the TV's topic cleared (the empty retained payload).
                    AutomationRunner.mqtt(Topics(base: "aabridge").sourceRoute(F.phone), routes[0].payload),
                    AutomationRunner.mqtt(routes[0].topic, ""),
                ])
            try #require(outcomes.count == 7)
            for outcome in outcomes { #expect(outcome.error == nil, "\(outcome.error ?? "")") }
            #expect(outcomes[0].calls == [Self.select("Alice's AirPods")])
            #expect(outcomes[1].calls == [Self.select("Bob's headphones")])
            #expect(outcomes[2].fired && outcomes[2].calls.isEmpty, "fallback: the player has TV Speaker already")
            #expect(outcomes[3].fired && outcomes[3].calls.isEmpty, "an accessory not listed")
            #expect(outcomes[4].fired && outcomes[4].calls.isEmpty, "startup: already TV Speaker")
            #expect(!outcomes[5].fired, "another source's topic")
            #expect(outcomes[6].fired && outcomes[6].calls.isEmpty, "a cleared topic")

            // The player on the AirPods: fallback selects TV Speaker again; no fallback source, nothing.
            let onAirPods: [(String, JSONValue)] = [
                ("media_player.living_room_tv", Self.object("on", attributes: ["source": "Alice's AirPods"]))
            ]
            let back = try AutomationRunner.run(
                blueprint, inputs: Self.routeInputs, states: onAirPods,
                events: [
                    AutomationRunner.mqtt(routes[2].topic, routes[2].payload), AutomationRunner.mqtt(routes[0].topic, routes[0].payload),
                ])
            #expect(back.map(\.calls) == [[Self.select("TV Speaker")], []])
            var noFallback = Self.routeInputs
            noFallback.removeAll { $0.0 == "fallback_output" }
            let none = try AutomationRunner.run(
                blueprint, inputs: noFallback, states: onAirPods, events: [AutomationRunner.mqtt(routes[2].topic, routes[2].payload)])
            #expect(none.first?.fired == true && none.first?.calls.isEmpty == true, "fallback_output defaults to nothing")
        }

        @Test("route: docs/mqtt-api.md's route payload, another base topic and a source written with dashes")
        func routeDocumentedPayload() throws {
            let blueprint = try BlueprintTests.blueprint("route_media_player.yaml")
            let doc = try String(contentsOfFile: Repository.file("docs/mqtt-api.md"), encoding: .utf8)
            let line = try #require(doc.split(separator: "\n").first { $0.hasPrefix("aabridge/source/112233445566/route {") })
            let (topic, payload) = (String(line.prefix { $0 != " " }), String(line.drop { $0 != " " }.dropFirst()))
            var inputs = Self.routeInputs
            inputs[0].1 = "11-22-33-44-55-66"
            inputs.append(("base_topic", "home/aabridge"))
            let outcomes = try AutomationRunner.run(
                blueprint, inputs: inputs, states: [("media_player.living_room_tv", Self.object("on", attributes: ["source": "HDMI 1"]))],
                events: [AutomationRunner.mqtt(topic, payload), AutomationRunner.mqtt("home/" + topic, payload)])
            try #require(outcomes.count == 2)
            #expect(!outcomes[0].fired, "the default base topic is not the bridge's")
            #expect(outcomes[1].calls == [Self.select("Alice's AirPods")], "\(outcomes[1].error ?? "")")
        }

        // MARK: Notify

        static func notify(_ title: String, _ message: String, action: String = "notify.notify") -> AutomationRunner.Call {
            AutomationRunner.Call(action: action, target: [:], data: ["title": .string(title), "message": .string(message)])
        }

        @Test("notify: the bridge's error payloads give the accessory, what failed and what to do; other codes as chosen")
        func notifyErrors() throws {
            let blueprint = try BlueprintTests.blueprint("notify_accessory_errors.yaml")
            let topic = Topics(base: "aabridge").error(F.budsID)
            let errors: [AccessoryControlDevice.Error] = [
                .init(.invalidated, operation: .register, field: .accessory, message: "registering again failed: the product is gone"),
                .init(.accessoryNotCapable, operation: .update, field: .devicePlacement, message: "placement was not registered"),
                .init(.unknown, operation: .update, message: "the store could not be written"),
                .init(.invalidRequest, operation: .update, field: .devicePlacement, message: "unknown placement \"sideways\""),
            ]
            let events = errors.map { AutomationRunner.mqtt(topic, Self.payloads.accessoryError($0, at: Self.at).serialized) }
            let outcomes = try AutomationRunner.run(blueprint, events: events)
            try #require(outcomes.count == 4)
            for outcome in outcomes { #expect(outcome.error == nil, "\(outcome.error ?? "")") }
            #expect(
                outcomes[0].calls == [
                    Self.notify(
                        "Audio accessory error: invalidated",
                        "A1:B2:C3:D4:E5:F6: registering again failed: the product is gone (operation register, field accessory). "
                            + "Register it again (aabridge/bridge/request/accessory/register).")
                ])
            #expect(
                outcomes[1].calls == [
                    Self.notify(
                        "Audio accessory error: accessoryNotCapable",
                        "A1:B2:C3:D4:E5:F6: placement was not registered (operation update, field devicePlacement). "
                            + "Its registration does not allow this: register it with the capability, or stop sending it.")
                ])
            #expect(
                outcomes[2].calls == [
                    Self.notify(
                        "Audio accessory error: unknown",
                        "A1:B2:C3:D4:E5:F6: the store could not be written (operation update). See aabridge/bridge/log.")
                ])
            #expect(outcomes[3].fired && outcomes[3].calls.isEmpty, "invalidRequest is not chosen by default")

            // Every code chosen, another notify action and base topic: the error lines of docs/mqtt-api.md.
            let doc = try String(contentsOfFile: Repository.file("docs/mqtt-api.md"), encoding: .utf8)
            // AccessoryControlDevice's errors: head tracking's (`"operation":"headTracking"`, AudioAccessoryError's
            // codes) are not among the blueprint's codes (a relay at 200 Hz would notify on every frame).
            let lines = doc.split(separator: "\n").filter {
                $0.wholeMatch(of: /aabridge\/accessory\/[0-9A-F]{12}\/error \{.*\}/) != nil && !$0.contains(#""operation":"headTracking""#)
            }
            #expect(lines.count >= 4)
            let documented = try AutomationRunner.run(
                blueprint,
                inputs: [
                    ("codes", ["invalidated", "accessoryNotCapable", "invalidRequest", "unknown"]),
                    ("notify_action", "notify.mobile_app_alices_phone"), ("base_topic", "home/aabridge"),
                ],
                events: lines.map { AutomationRunner.mqtt("home/" + $0.prefix { $0 != " " }, String($0.drop { $0 != " " }.dropFirst())) })
            for (line, outcome) in zip(lines, documented) {
                let payload = try JSONParser.parse(String(line.drop { $0 != " " }.dropFirst()))
                let id = line.split(separator: "/")[2]
                let address = stride(from: 0, to: 12, by: 2).map { String(Array(id)[$0..<$0 + 2]) }.joined(separator: ":")
                let call = try #require(outcome.calls.first, "\(line): \(outcome.error ?? "no call")")
                #expect(call.action == "notify.mobile_app_alices_phone")
                #expect(call.data["title"]?.stringValue == "Audio accessory error: \(payload["code"]?.stringValue ?? "")")
                let message = call.data["message"]?.stringValue ?? ""
                #expect(message.hasPrefix("\(address): \(payload["message"]?.stringValue ?? "") (operation update"), "\(message)")
                #expect(
                    message.hasSuffix("Correct what was sent to it.")
                        || message.hasSuffix("register it with the capability, or stop sending it."))
            }
        }

        @Test("notify: a failed setup from bridge/event, unless switched off; an invalidated Registration sensor")
        func notifySetupAndRegistration() throws {
            let blueprint = try BlueprintTests.blueprint("notify_accessory_errors.yaml")
            let eventTopic = Topics(base: "aabridge").bridgeEvent
            let failed = Self.payloads.event(SetupEvent(.pickerSetupFailed, error: SetupError(.connectionFailed, "not heard")), at: Self.at)
            let activated = Self.payloads.event(SetupEvent(.activated), at: Self.at)
            let dismissed = Self.payloads.event(SetupEvent(.pickerDidDismiss, error: SetupError(.userCancelled, "dismissed")), at: Self.at)
            let sensor = "sensor.alice_s_airpods_registration"
            let name = "Alice's AirPods Registration"
            let events = [
                AutomationRunner.mqtt(eventTopic, failed.serialized), AutomationRunner.mqtt(eventTopic, activated.serialized),
                AutomationRunner.mqtt(eventTopic, dismissed.serialized),
                AutomationRunner.state(sensor, from: Self.object("active", name: name), to: Self.object("invalidated", name: name)),
                AutomationRunner.state(sensor, from: Self.object("unknown", name: name), to: Self.object("invalidated", name: name)),
                AutomationRunner.state(sensor, from: Self.object("invalidated", name: name), to: Self.object("active", name: name)),
            ]
            let outcomes = try AutomationRunner.run(blueprint, inputs: [("registration_sensors", [.string(sensor)])], events: events)
            try #require(outcomes.count == 6)
            for outcome in outcomes { #expect(outcome.error == nil, "\(outcome.error ?? "")") }
            #expect(
                outcomes[0].calls == [
                    Self.notify(
                        "Audio accessory setup failed",
                        "Setting up the accessory picked in the picker failed: connectionFailed (150). Show the picker again.")
                ])
            #expect(outcomes[1].fired && outcomes[1].calls.isEmpty, "activated")
            #expect(outcomes[2].fired && outcomes[2].calls.isEmpty, "a dismissed picker is no failure")
            #expect(
                outcomes[3].calls == [
                    Self.notify(
                        "Audio accessory registration invalidated",
                        "Alice's AirPods Registration is invalidated: audio switching stops until the accessory is registered again "
                            + "(aabridge/bridge/request/accessory/register).")
                ])
            #expect(!outcomes[4].fired, "after a restart")
            #expect(!outcomes[5].fired, "registered again")

            let off = try AutomationRunner.run(
                blueprint, inputs: [("setup_failures", false)], events: [AutomationRunner.mqtt(eventTopic, failed.serialized), events[3]])
            #expect(off.map(\.calls.isEmpty) == [true, true], "switched off; no sensor chosen")
            #expect(off.last?.fired == false)
        }

        // MARK: Companion app

        static let airPods = "A1:B2:C3:D4:E5:F6 (Alice’s AirPods Pro)"
        static let watch = "12:34:56:78:9A:BC (Pixel Watch 2)"
        static let speaker = "C1:B2:C3:D4:E5:F6 (Kitchen Speaker)"

        static func phoneState(_ devices: [String]?, state: String? = nil) -> JSONValue {
            guard let devices else { return ["state": .string(state ?? "unavailable"), "attributes": ["friendly_name": "Bluetooth"]] }
            return [
                "state": .string(state ?? String(devices.count)),
                "attributes": ["connected_paired_devices": .array(devices.map(JSONValue.string)), "friendly_name": "Bluetooth"],
            ]
        }

        @Test("companion: the blueprint sends what docs/examples/ha-companion-sources.yaml sends, with the same actions")
        func companionMatchesTheRecipe() throws {
            let blueprint = try BlueprintTests.blueprint("companion_app_sources.yaml")
            let recipe = try BlueprintTests.load("docs/examples/ha-companion-sources.yaml")
            #expect(try AutomationRunner.json(try #require(blueprint["actions"])) == AutomationRunner.json(try #require(recipe["actions"])))
            #expect(
                try AutomationRunner.json(try #require(blueprint["conditions"]))
                    == AutomationRunner.json(try #require(recipe["conditions"])))
            #expect(blueprint["mode"]?.scalar?.value == recipe["mode"]?.scalar?.value)

            let sensor = "sensor.alices_phone_bluetooth_connection"
            let cases: [(JSONValue?, JSONValue)] = [
                (Self.phoneState([Self.watch]), Self.phoneState([Self.watch, Self.airPods])),
                (Self.phoneState([Self.watch, Self.airPods]), Self.phoneState([Self.watch])),
                (nil, Self.phoneState([Self.airPods])),
                (Self.phoneState(nil), Self.phoneState([Self.airPods, Self.watch])),
                (Self.phoneState([Self.airPods]), Self.phoneState(nil)),
                (Self.phoneState([Self.airPods]), ["state": "0", "attributes": [:]]),
                (Self.phoneState([Self.speaker]), Self.phoneState([Self.airPods.lowercased()])),
            ]
            let events = cases.map { AutomationRunner.state(sensor, from: $0.0, to: $0.1) }
            let fromRecipe = try AutomationRunner.run(recipe, events: events)
            let fromBlueprint = try AutomationRunner.run(
                blueprint,
                inputs: [("bluetooth_sensor", .string(sensor)), ("phone", "11:22:33:44:55:66"), ("accessories", ["A1:B2:C3:D4:E5:F6"])],
                events: events)
            try #require(fromRecipe.count == cases.count && fromBlueprint.count == cases.count)
            let set = { (id: String, key: String) in
                AutomationRunner.Call(
                    action: "mqtt.publish", target: [:],
                    data: [
                        "topic": .string("aabridge/accessory/\(id)/set"), "payload": .string(#"{"\#(key)":"11:22:33:44:55:66"}"#),
                        "qos": 1, "retain": false,
                    ])
            }
            let expected: [[AutomationRunner.Call]?] = [
                [set("A1B2C3D4E5F6", "source_connected")], [set("A1B2C3D4E5F6", "source_disconnected")],
                [set("A1B2C3D4E5F6", "source_connected")], [set("A1B2C3D4E5F6", "source_connected")], nil,
                [set("A1B2C3D4E5F6", "source_disconnected")], [set("A1B2C3D4E5F6", "source_connected")],
            ]
            for (index, (recipeOutcome, blueprintOutcome)) in zip(fromRecipe, fromBlueprint).enumerated() {
                #expect(
                    recipeOutcome.error == nil && blueprintOutcome.error == nil, "\(recipeOutcome.error ?? blueprintOutcome.error ?? "")")
                #expect(blueprintOutcome.fired, "case \(index)")
                #expect((blueprintOutcome.passed ? blueprintOutcome.calls : nil) == expected[index], "case \(index)")
                #expect(
                    blueprintOutcome.passed == recipeOutcome.passed && blueprintOutcome.calls == recipeOutcome.calls,
                    "case \(index): as the recipe")
            }

            // Several accessories written any way, another phone and base topic.
            let several = try AutomationRunner.run(
                blueprint,
                inputs: [
                    ("bluetooth_sensor", .string(sensor)), ("phone", "66:55:44:33:22:11"),
                    ("accessories", ["a1:b2:c3:d4:e5:f6", "C1-B2-C3-D4-E5-F6"]),
                    ("base_topic", "home/aabridge"),
                ],
                events: [AutomationRunner.state(sensor, from: Self.phoneState([Self.speaker]), to: Self.phoneState([Self.airPods]))])
            #expect(
                several.first?.calls.map { "\($0.data["topic"]?.stringValue ?? "") \($0.data["payload"]?.stringValue ?? "")" } == [
                    #"home/aabridge/accessory/A1B2C3D4E5F6/set {"source_connected":"66:55:44:33:22:11"}"#,
                    #"home/aabridge/accessory/C1B2C3D4E5F6/set {"source_disconnected":"66:55:44:33:22:11"}"#,
                ])
        }
    }
}

extension YAMLNode {
    /// A mapping's value for `key`.
    fileprivate subscript(key: String) -> YAMLNode? {
        entries?.first { $0.key.scalar?.value == key }?.value
    }

    /// A mapping's entries.
    fileprivate var entries: [Entry]? {
        guard case .mapping(let entries) = content else { return nil }
        return entries
    }
}
