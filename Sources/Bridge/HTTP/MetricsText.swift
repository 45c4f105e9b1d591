/// Prometheus' text exposition format 0.0.4: `# HELP` and `# TYPE` once per family, then its
/// samples. Label values are escaped; the bridge only ever uses bounded label sets (formats,
/// reasons, codes, request names), never an accessory's address or name.
struct MetricsText {
    private(set) var text = ""

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) {
        sample(name, labels, Double(value))
    }

    /// One family with a sample per label value (sorted, so the text is stable).
    mutating func counter(_ name: String, _ help: String, label: String, _ values: [String: Int]) {
        family(name, "counter", help)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) { sample(name, [(label, key)], value) }
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Int) {
        family(name, "gauge", help)
        sample(name, [], value)
    }

    mutating func counter(_ name: String, _ help: String, _ value: Int) {
        family(name, "counter", help)
        sample(name, [], value)
    }

    mutating func histogram(_ name: String, _ help: String, _ histogram: LatencyHistogram) {
        family(name, "histogram", help)
        let snapshot = histogram.snapshot
        for (bound, count) in zip(histogram.bounds, snapshot.cumulative) {
            sample(name + "_bucket", [("le", Self.format(bound))], count)
        }
        sample(name + "_bucket", [("le", "+Inf")], snapshot.count)
        sample(name + "_sum", [], snapshot.sum)
        sample(name + "_count", [], snapshot.count)
    }

    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Integers without a fraction, the rest as Swift writes a Double (which Prometheus reads).
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
