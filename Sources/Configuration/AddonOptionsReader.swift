import JSON
import Telemetry

/// Reads the add-on's options (`/data/options.json`) into the configuration's sections,
/// noting each problem at the option's path. The Supervisor checks the options against
/// `config.yaml`'s schema before it starts the add-on, but not every installation's
/// Supervisor is the one the schema was written for, and `options.json` can be edited by hand:
/// so everything is checked here again, with a message that names the option.
struct AddonOptionsReader {
    let options: JSONValue
    let shipped: YAMLNode
    private(set) var issues: [ConfigurationIssue] = []

    init(options: JSONValue, shipped: YAMLNode) {
        self.options = options
        self.shipped = shipped
    }

    /// The sections the options replace: products, gateways, rooms, identity, log.
    mutating func sections() -> [String: YAMLNode] {
        guard case .object(let pairs) = options else {
            fail("options", "expected an object of options, found \(Self.kind(options))")
            return [:]
        }
        for (key, _) in pairs where !AddonConfiguration.optionKeys.contains(key) {
            fail("options.\(key)", "unknown option (known: \(AddonConfiguration.optionKeys.joined(separator: ", ")))")
        }
        var sections: [String: YAMLNode] = [:]
        if let products = products() { sections["products"] = products }
        if let gateways = gateways() { sections["gateways"] = gateways }
        if let rooms = rooms() { sections["rooms"] = rooms }
        if let identity = identity() { sections["identity"] = identity }
        if let log = log() { sections["log"] = log }
        return sections
    }

    /// The shipped products the option names, in the option's order, as the shipped file has them.
    private mutating func products() -> YAMLNode? {
        let path = "options.products"
        guard let items = list(options["products"], at: path, required: true) else { return nil }
        let available = shippedProducts()
        var chosen: [YAMLNode] = []
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            guard let name = string(item, at: "\(path)[\(index)]") else { continue }
            guard let product = available.first(where: { $0.name == name }) else {
                fail(
                    "\(path)[\(index)]",
                    "unknown product '\(name.prefix(60))' (known: \(available.map(\.name).joined(separator: ", ")))")
                continue
            }
            if let first = seen[name] {
                fail("\(path)[\(index)]", "'\(name)' is listed twice (also \(path)[\(first)])")
                continue
            }
            seen[name] = index
            chosen.append(product.node)
        }
        if items.isEmpty { fail(path, "choose at least one product (known: \(available.map(\.name).joined(separator: ", ")))") }
        return YAMLWriter.sequence(chosen)
    }

    private func shippedProducts() -> [(name: String, node: YAMLNode)] {
        guard case .sequence(let items)? = shipped.value(forKey: "products")?.content else { return [] }
        return items.compactMap { item in
            guard let name = item.value(forKey: "name")?.scalar?.value else { return nil }
            return (name, item)
        }
    }

    private mutating func gateways() -> YAMLNode? {
        let path = "options.gateways"
        guard let items = list(options["gateways"], at: path, required: true) else { return nil }
        let formats = GatewayFormat.allCases.map(\.rawValue)
        var gateways: [YAMLNode] = []
        // The Supervisor's schema cannot say "unique": a second gateway of the same name is
        // refused here, by its option, before the loader would name it in the made file.
        var firstNames: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let at = "\(path)[\(index)]"
            guard let fields = object(item, at: at, allowed: ["name", "format", "topic", "status_topic", "adapter", "scanning"]) else {
                continue
            }
            guard let name = string(fields["name"], at: "\(at).name"), let format = string(fields["format"], at: "\(at).format") else {
                continue
            }
            if let first = firstNames[name] {
                fail("\(at).name", "duplicate gateway name '\(name.prefix(60))' (also \(path)[\(first)]): each gateway needs its own name")
                continue
            }
            firstNames[name] = index
            guard formats.contains(format) else {
                fail("\(at).format", "unknown gateway format '\(format.prefix(60))' (known: \(formats.joined(separator: ", ")))")
                continue
            }
            var entry: [(String, YAMLNode)] = [("name", YAMLWriter.string(name)), ("format", YAMLWriter.string(format))]
            // A bluez gateway's adapter and scanning; the bridge's own reading refuses them on another format.
            for key in ["topic", "status_topic", "adapter", "scanning"] {
                guard let value = fields[key], !value.isNull else { continue }
                if let text = string(value, at: "\(at).\(key)"), !text.isEmpty { entry.append((key, YAMLWriter.string(text))) }
            }
            gateways.append(YAMLWriter.mapping(entry))
        }
        return YAMLWriter.sequence(gateways)
    }

    /// `rooms` is a list of `{node, room}` in the options (the Supervisor's schema has no
    /// free-form mapping), the configuration's `node: room` mapping.
    private mutating func rooms() -> YAMLNode? {
        let path = "options.rooms"
        guard let items = list(options["rooms"], at: path, required: false) else { return nil }
        var entries: [YAMLNode.Entry] = []
        var firstNodes: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let at = "\(path)[\(index)]"
            guard let fields = object(item, at: at, allowed: ["node", "room"]),
                let node = string(fields["node"], at: "\(at).node"), let room = string(fields["room"], at: "\(at).room")
            else { continue }
            guard !node.isEmpty else {
                fail("\(at).node", "a node name must not be empty")
                continue
            }
            // One topic level, as the loader's rooms: wants it; the Supervisor's str(1,128) lets
            // anything through.
            if let character = node.first(where: { "/+#".contains($0) }) {
                fail(
                    "\(at).node",
                    "'\(node.prefix(60))' has a '\(character)': a node name is one level of its gateway's topics "
                        + "(kitchen in home/kitchen/BTtoMQTT/...), without /, + or #")
                continue
            }
            if let first = firstNodes[node] {
                fail("\(at).node", "node '\(node.prefix(60))' is listed twice (also \(path)[\(first)])")
                continue
            }
            firstNodes[node] = index
            entries.append(.init(key: YAMLWriter.string(node), value: YAMLWriter.string(room)))
        }
        return YAMLNode(.mapping(entries), origin: .file(line: 0, column: 0))
    }

    private mutating func identity() -> YAMLNode? {
        let path = "options.identity"
        guard let value = options["identity"], !value.isNull else { return nil }
        guard let fields = object(value, at: path, allowed: ["follow", "reattach"]) else { return nil }
        var entries: [(String, YAMLNode)] = []
        if let node = fields["follow"], !node.isNull {
            guard case .bool(let follow) = node else {
                fail("\(path).follow", "expected true or false, found \(Self.kind(node))")
                return nil
            }
            entries.append(("follow", YAMLWriter.plain(follow ? "true" : "false")))
        }
        if let node = fields["reattach"], !node.isNull, let reattach = string(node, at: "\(path).reattach") {
            guard let known = oneOf(IdentityConfiguration.Reattach.allCases.map(\.rawValue), reattach, at: "\(path).reattach") else {
                return nil
            }
            entries.append(("reattach", YAMLWriter.string(known)))
        }
        // What the options do not set stays as shipped (lookalike_window_s).
        return YAMLWriter.mapping(entries, over: shipped.value(forKey: "identity"))
    }

    private mutating func log() -> YAMLNode? {
        guard let value = options["log_level"], !value.isNull, let text = string(value, at: "options.log_level"),
            let level = oneOf(LogConfiguration.Level.allCases.map(\.rawValue), text, at: "options.log_level")
        else { return nil }
        return YAMLWriter.mapping([("level", YAMLWriter.string(level)), ("format", YAMLWriter.string("text"))])
    }

    // MARK: - Types

    /// `text` when it is one of `known`, else an issue.
    private mutating func oneOf(_ known: [String], _ text: String, at path: String) -> String? {
        guard known.contains(text) else {
            fail(path, "expected one of \(known.joined(separator: ", ")), found '\(text.prefix(60))'")
            return nil
        }
        return text
    }

    private mutating func list(_ value: JSONValue?, at path: String, required: Bool) -> [JSONValue]? {
        guard let value, !value.isNull else {
            if required { fail(path, "missing (a list)") }
            return nil
        }
        guard case .array(let items) = value else {
            fail(path, "expected a list, found \(Self.kind(value))")
            return nil
        }
        return items
    }

    private mutating func string(_ value: JSONValue?, at path: String) -> String? {
        guard let value else {
            fail(path, "missing (a text)")
            return nil
        }
        guard case .string(let text) = value else {
            fail(path, "expected a text, found \(Self.kind(value))")
            return nil
        }
        return text
    }

    /// The object's fields; unknown keys are issues (a typo must not be ignored).
    private mutating func object(_ value: JSONValue, at path: String, allowed: [String]) -> [String: JSONValue]? {
        guard case .object(let pairs) = value else {
            fail(path, "expected an object with \(allowed.joined(separator: ", ")), found \(Self.kind(value))")
            return nil
        }
        var fields: [String: JSONValue] = [:]
        for (key, field) in pairs {
            guard allowed.contains(key) else {
                fail("\(path).\(key)", "unknown key (known: \(allowed.joined(separator: ", ")))")
                continue
            }
            fields[key] = field
        }
        return fields
    }

    private mutating func fail(_ path: String, _ message: String) {
        issues.append(ConfigurationIssue(path: path, message: message))
    }

    /// What a value is, for "expected X, found Y" (never the value of a string: it might be
    /// long, or a secret typed into the wrong field).
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .int(let number): "the number \(number)"
        case .double(let number): "the number \(number)"
        case .string: "a text"
        case .array: "a list"
        case .object: "an object"
        }
    }
}
