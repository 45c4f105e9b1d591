import Foundation
import JSON
import TestSupport
import Testing

@testable import Configuration

/// The Home Assistant add-on's configuration (`aabridge addon-config`): the options and the
/// Supervisor's MQTT service on top of the shipped config/aabridge.yaml, through the real
/// loader. ha-addon/tests/test_addon.py runs the same through the add-on's run script.
@Suite("Home Assistant add-on configuration")
struct AddonConfigurationTests {
    static let service =
        #"{"result":"ok","data":{"addon":"core_mosquitto","host":"core-mosquitto","port":1883,"ssl":false,"protocol":"3.1.1","#
        + #""username":"addons","password":"p#ss: \"w\"\n"}}"#
    static let options = """
        {"products":["Fast Pair headphones","AirPods or Beats"],
         "gateways":[{"name":"omg","format":"openmqttgateway"},{"name":"esp","format":"espresense","topic":"espresense/devices/#"}],
         "rooms":[{"node":"esp32-3f2a","room":"Kitchen # 1: \\"big\\""}],"identity":{"follow":false,"reattach":"ask"},"log_level":"debug"}
        """

    static func make(_ options: String, service: String = service) -> Result<String, ConfigurationErrors> {
        let template = FileManager.default.contents(atPath: Repository.file("config/aabridge.yaml")) ?? Data()
        return AddonConfiguration.yaml(
            options: Array(options.utf8), mqtt: Array(service.utf8), template: Array(template), templateFile: "config/aabridge.yaml",
            settings: .init(dataDirectory: FileManager.default.temporaryDirectory.path))
    }

    static func paths(_ options: String, service: String = service) -> [String] {
        guard case .failure(let errors) = make(options, service: service) else { return [] }
        return errors.issues.map(\.description)
    }

    @Test("options and the MQTT service become a configuration the loader takes, with the shipped products and defaults")
    func good() throws {
        let yaml = try Self.make(Self.options).get()
        let configuration = try ConfigurationLoader.load(yaml: yaml, hostname: "h").get()
        #expect(configuration.mqtt.server.contains("core-mosquitto:1883"), "\(configuration.mqtt.server)")
        #expect(configuration.mqtt.user == "addons")
        #expect(configuration.mqtt.password?.revealed == "p#ss: \"w\"\n", "a password with YAML's own characters survives")
        #expect(configuration.mqtt.baseTopic == "aabridge", "the topics do not change")
        #expect(configuration.products.map(\.name) == ["Fast Pair headphones", "AirPods or Beats"])
        #expect(configuration.gateways.map(\.name) == ["omg", "esp"])
        #expect(configuration.rooms == ["esp32-3f2a": "Kitchen # 1: \"big\""])
        #expect(configuration.identity == IdentityConfiguration(follow: false, reattach: .ask, lookalikeWindowSeconds: 600))
        #expect(configuration.log.level == .debug)
        #expect(configuration.http.listen?.description == "0.0.0.0:8099")
        #expect(configuration.http.allowedClients.map(\.description) == ["172.30.32.2"])
        #expect(configuration.http.token == nil, "ingress: the Supervisor checked the user")
        #expect(configuration.storage.path.hasSuffix("/aabridge.sqlite3"))
    }

    @Test("a wrong type, an unknown product, an unknown key: each at its option's path, all at once")
    func bad() {
        let issues = Self.paths(
            #"{"products":["AirPods or Beats","Sony WH-1000XM5",7],"gateways":[{"name":"g","format":"zigbee"},{"name":"h"}],"#
                + #""identity":{"follow":"yes","reattach":"sometimes"},"log_level":"loud","colour":"red"}"#)
        #expect(issues.contains { $0.hasPrefix("options.products[1]: unknown product 'Sony WH-1000XM5' (known: AirPods or Beats, ") })
        #expect(issues.contains("options.products[2]: expected a text, found the number 7"))
        #expect(issues.contains { $0.hasPrefix("options.gateways[0].format: unknown gateway format 'zigbee'") })
        #expect(issues.contains("options.gateways[1].format: missing (a text)"))
        #expect(issues.contains("options.identity.follow: expected true or false, found a text"))
        #expect(issues.contains("options.log_level: expected one of debug, info, warning, error, found 'loud'"))
        #expect(issues.contains { $0.hasPrefix("options.colour: unknown option") })
        #expect(Self.paths(#"{"products":[],"gateways":[]}"#).contains { $0.hasPrefix("options.products: choose at least one") })
        #expect(Self.paths(#"{"products":"AirPods or Beats","gateways":[]}"#).contains("options.products: expected a list, found a text"))
        #expect(Self.paths("[1]").contains("options: expected an object of options, found a list"))
        #expect(Self.paths("{not json").contains { $0.hasPrefix("options: invalid JSON") })
    }

    @Test("what only the loader knows is still named by its option (an empty room)")
    func loaderIssues() {
        let issues = Self.paths(#"{"products":["AirPods or Beats"],"gateways":[],"rooms":[{"node":"n1","room":"  "}]}"#)
        #expect(issues.contains { $0.hasPrefix("options.rooms (node 'n1')") }, "\(issues)")
    }

    /// Options the Supervisor's schema lets through (it has no "unique", no "at least one",
    /// and `str` takes any character), each with exactly one line naming it.
    static let supervisorPasses: [(options: String, line: String)] = [
        (#"{"products":[],"gateways":[]}"#, "options.products: choose at least one product (known: AirPods or Beats, "),
        (
            #"{"products":["AirPods or Beats","Fast Pair headphones","AirPods or Beats"],"gateways":[]}"#,
            "options.products[2]: 'AirPods or Beats' is listed twice (also options.products[0])"
        ),
        (
            #"{"products":["AirPods or Beats"],"gateways":[{"name":"a","format":"tasmota"},{"name":"a","format":"native"}]}"#,
            "options.gateways[1].name: duplicate gateway name 'a' (also options.gateways[0])"
        ),
        (
            #"{"products":["AirPods or Beats"],"gateways":[],"rooms":[{"node":"espresense/rooms/k","room":"Kitchen"}]}"#,
            "options.rooms[0].node: 'espresense/rooms/k' has a '/': a node name is one level of its gateway's topics"
        ),
        (
            #"{"products":["AirPods or Beats"],"gateways":[],"rooms":[{"node":"n","room":"A"},{"node":"n","room":"B"}]}"#,
            "options.rooms[1].node: node 'n' is listed twice (also options.rooms[0])"
        ),
    ]

    @Test("what the Supervisor lets through (no product, one twice, a gateway name twice, a / in a node): one line naming the option")
    func supervisorLetsThrough() {
        for (options, line) in Self.supervisorPasses {
            let issues = Self.paths(options)
            #expect(issues.count == 1, "\(options): \(issues)")
            #expect(issues.first?.hasPrefix(line) == true, "\(options): \(issues)")
        }
        #expect(ConfigurationErrors.exitStatus == 2, "addon-config's exit status for a bad option")
    }

    @Test("ingress: the one proxy address may hold more connections than several tabs use, loopback keeps room of its own")
    func ingressConnections() throws {
        let configuration = try ConfigurationLoader.load(yaml: try Self.make(Self.options).get(), hostname: "h").get()
        #expect(configuration.http.connectionsPerClient == AddonConfiguration.ingressConnectionsPerClient)
        #expect(configuration.http.connectionsPerClient >= 40, "eight tabs of about five connections each")
        #expect(configuration.http.connectionLimit >= configuration.http.connectionsPerClient + 16, "room for loopback")
    }

    @Test("the Supervisor's answer: an error result, a missing host, MQTT 3.1, TLS")
    func service() throws {
        let minimal = #"{"products":["AirPods or Beats"],"gateways":[]}"#
        #expect(
            Self.paths(minimal, service: #"{"result":"error","message":"No MQTT service"}"#).contains {
                $0.hasPrefix("services/mqtt: the Supervisor did not give the MQTT service (result error: No MQTT service)")
            })
        #expect(Self.paths(minimal, service: #"{"result":"ok","data":{"port":1883}}"#).contains { $0.hasPrefix("services/mqtt.host") })
        #expect(
            Self.paths(minimal, service: #"{"result":"ok","data":{"host":"h","port":1883,"protocol":"3.1"}}"#).contains {
                $0.hasPrefix("services/mqtt.protocol")
            })
        let tls = try Self.make(minimal, service: #"{"result":"ok","data":{"host":"broker","port":8883,"ssl":true}}"#).get()
        let configuration = try ConfigurationLoader.load(yaml: tls, hostname: "h").get()
        #expect(configuration.mqtt.server.hasPrefix("mqtts://broker:8883"), "\(configuration.mqtt.server)")
        #expect(configuration.mqtt.user == nil)
    }

    @Test("YAMLWriter: what it writes parses back to the same text, whatever the characters")
    func writerRoundTrip() throws {
        let texts = [
            "plain", "", "a: b", "# not a comment", "\"quoted\" and 'single'", "line\nbreak\ttab", "\u{1}\u{7F}", "null", "0719",
            "Küche 🎧", "- dash", "[flow]", "{flow}", "&anchor", "*alias", "!tag", "%", "@", "`", "trailing \\",
        ]
        let node = YAMLWriter.mapping(texts.enumerated().map { ("k\($0.offset)", YAMLWriter.string($0.element)) })
        let parsed = try #require(try YAMLParser().parse(YAMLWriter.document(node)))
        guard case .mapping(let entries) = parsed.content else {
            Issue.record("not a mapping")
            return
        }
        #expect(entries.map { $0.value.scalar?.value } == texts)
        #expect(entries.allSatisfy { $0.value.scalar?.isNull == false }, "a quoted null is a text")
    }

    /// A node of config.yaml as the Supervisor would write it into options.json.
    static func json(_ node: YAMLNode) -> JSONValue {
        switch node.content {
        case .mapping(let entries): .object(entries.map { ($0.key.scalar?.value ?? "", json($0.value)) })
        case .sequence(let items): .array(items.map(json))
        case .scalar(let scalar):
            if scalar.style == .plain, scalar.value == "true" || scalar.value == "false" {
                .bool(scalar.value == "true")
            } else if scalar.style == .plain, let number = Int(scalar.value) {
                .int(number)
            } else {
                .string(scalar.value)
            }
        }
    }

    static func section(_ root: YAMLNode, _ key: String) -> YAMLNode? {
        guard case .mapping(let entries) = root.content else { return nil }
        return entries.first { $0.key.scalar?.value == key }?.value
    }

    /// The values of a `list(a|b|c)` schema entry.
    static func choices(_ node: YAMLNode?) -> [String] {
        guard let text = node?.scalar?.value, text.hasPrefix("list("), text.hasSuffix(")") else { return [] }
        return text.dropFirst(5).dropLast().split(separator: "|").map(String.init)
    }

    @Test("config.yaml: its default options make a valid configuration, its schema's choices are the bridge's own")
    func addonFile() throws {
        let text = try String(contentsOfFile: Repository.file("ha-addon/aabridge/config.yaml"), encoding: .utf8)
        let root = try #require(try YAMLParser().parse(text))
        let options = try #require(Self.section(root, "options"))
        let yaml = try Self.make(Self.json(options).serialized).get()
        let configuration = try ConfigurationLoader.load(yaml: yaml, hostname: "h").get()
        let shipped = try ConfigurationLoader.load(path: Repository.file("config/aabridge.yaml"), environment: [:], hostname: "h").get()
        #expect(configuration.products.map(\.name) == shipped.products.map(\.name), "by default every shipped product")
        #expect(configuration.gateways == shipped.gateways, "by default the shipped gateways")
        let schema = try #require(Self.section(root, "schema"))
        let products = try #require(Self.section(schema, "products"))
        guard case .sequence(let entries) = products.content else { throw ConfigurationErrors(file: "config.yaml", issues: []) }
        #expect(Self.choices(entries.first) == shipped.products.map(\.name))
        guard case .sequence(let gateways)? = Self.section(schema, "gateways")?.content, let gateway = gateways.first else {
            throw ConfigurationErrors(file: "config.yaml", issues: [])
        }
        #expect(Self.choices(Self.section(gateway, "format")) == GatewayConfiguration.Format.allCases.map(\.rawValue))
        let identity = try #require(Self.section(schema, "identity"))
        #expect(Self.choices(Self.section(identity, "reattach")) == IdentityConfiguration.Reattach.allCases.map(\.rawValue))
        #expect(Self.choices(Self.section(schema, "log_level")) == LogConfiguration.Level.allCases.map(\.rawValue))
    }
}
