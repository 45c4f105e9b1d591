import AccessoryKit
import Bridge
import Configuration
import Foundation
import TestSupport
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

/// docs/home-assistant.md: its YAML is valid, its automations have Home Assistant's shape, and
/// every entity id it names is one Home Assistant derives from the discovery payloads.
@Suite struct HomeAssistantDocumentationTests {
    let text: String

    init() throws {
        text = try String(contentsOfFile: Repository.file("docs/home-assistant.md"), encoding: .utf8)
    }

    /// The ```yaml blocks, in order.
    var yamlBlocks: [String] {
        text.components(separatedBy: "```yaml\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    /// Home Assistant's entity id for an entity: `<platform>.<slug of device name + entity name>`
    /// (its slugify lower-cases and turns every run of other characters into `_`).
    static func entityID(platform: String, device: String, entity: String) -> String {
        var slug = ""
        for scalar in "\(device) \(entity)".lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.hasSuffix("_") {
                slug += "_"
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        return "\(platform).\(slug)"
    }

    /// The entity ids of every discovery payload for Alice's AirPods and two bridges.
    var derivedEntityIDs: Set<String> {
        // The same AirPods of a product that asks for confirmation: its Authorize button.
        var confirming = F.buds
        confirming.setupOptions = [.confirmAuthorization]
        let confirmingDiscovery = HomeAssistantDiscovery(
            baseTopic: "aabridge", products: [confirming], sources: F.discovery.sources, version: BridgeModule.version)
        let devices = [
            confirmingDiscovery.accessoryDevice(F.fullStatus).payload,
            F.discovery.accessoryDevice(F.fullStatus, batteryParts: Set(HomeAssistantBatteryPart.allCases)).payload,
            F.discovery.bridgeDevice(gateways: [HomeAssistantGateway(entry: "omg", name: "kitchen")]).payload,
            HomeAssistantDiscovery(baseTopic: "upstairs", version: BridgeModule.version).bridgeDevice().payload,
        ]
        var ids: Set<String> = []
        for device in devices {
            guard let deviceName = device["device"]?["name"]?.stringValue, case .object(let components)? = device["components"] else {
                continue
            }
            for (_, component) in components {
                guard let platform = component["platform"]?.stringValue, let name = component["name"] else { continue }
                // A null name: the entity is the device itself (the presence tracker), named by it alone.
                ids.insert(Self.entityID(platform: platform, device: deviceName, entity: name.stringValue ?? ""))
            }
        }
        return ids
    }

    @Test func entityIDsFollowHomeAssistantsSlugs() {
        #expect(Self.entityID(platform: "sensor", device: "Alice's AirPods", entity: "Placement") == "sensor.alice_s_airpods_placement")
        #expect(derivedEntityIDs.contains("event.alice_s_airpods_decision"))
        #expect(derivedEntityIDs.contains("button.aabridge_show_picker"))
        #expect(derivedEntityIDs.contains("device_tracker.alice_s_airpods"))
    }

    @Test func everyYAMLBlockParses() throws {
        let blocks = yamlBlocks
        #expect(blocks.count == 5)
        for block in blocks {
            #expect(throws: Never.self) { _ = try YAMLParser().parse(block) }
        }
    }

    @Test func automationsHaveHomeAssistantsShape() throws {
        let automations = try yamlBlocks.dropFirst().map { try #require(try YAMLParser().parse($0)) }
        #expect(automations.count == 4)
        var triggerKinds: [String] = []
        for automation in automations {
            guard case .mapping(let entries) = automation.content else { Issue.record("not a mapping"); continue }
            let keys = entries.compactMap(\.key.scalar?.value)
            for required in ["alias", "triggers", "actions"] { #expect(keys.contains(required), "\(keys)") }
            for key in keys {
                #expect(["alias", "description", "triggers", "conditions", "variables", "actions", "mode", "max"].contains(key), "\(key)")
            }
            guard case .sequence(let triggers)? = entries.first(where: { $0.key.scalar?.value == "triggers" })?.value.content else {
                Issue.record("triggers is not a list")
                continue
            }
            for trigger in triggers {
                guard case .mapping(let pairs) = trigger.content else { continue }
                let kind = pairs.first { $0.key.scalar?.value == "trigger" }?.value.scalar?.value
                triggerKinds.append(kind ?? "none")
                if kind == "mqtt", let topic = pairs.first(where: { $0.key.scalar?.value == "topic" })?.value.scalar?.value {
                    // The topic the bridge publishes errors on, with a wildcard for the ID.
                    #expect(topic == Topics(base: "aabridge").error(F.budsID).replacingOccurrences(of: F.budsID.topicID, with: "+"))
                }
            }
        }
        #expect(triggerKinds == ["state", "state", "mqtt", "state"])
    }

    @Test func everyNamedEntityIsOneAabridgeCreates() throws {
        let pattern = try NSRegularExpression(pattern: "\\b(sensor|binary_sensor|event|button|select|text|device_tracker)\\.[a-z0-9_]+")
        let range = NSRange(text.startIndex..., in: text)
        let named = Set(pattern.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
        #expect(named.count >= 10)
        let derived = derivedEntityIDs
        // The companion app's sensor, which "Sources from the companion app" reads.
        let companionApp: Set = ["sensor.alices_phone_bluetooth_connection"]
        for id in named.subtracting(companionApp).sorted() { #expect(derived.contains(id), "\(id) is not an entity aabridge creates") }
    }

    @Test func topicsInTheDocsExist() {
        let topics = Topics(base: "aabridge")
        let generic = Topics(base: "<base>")
        for topic in [
            topics.decision(F.budsID), generic.requestPrefix + "picker/show", topics.requestPrefix + "accessory/register",
            generic.bridgeState, generic.availability(F.budsID).replacingOccurrences(of: F.budsID.topicID, with: "<ID>"),
        ] {
            #expect(text.contains(topic), "\(topic)")
        }
    }
}
