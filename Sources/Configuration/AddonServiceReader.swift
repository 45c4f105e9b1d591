import JSON

/// Reads the Supervisor's MQTT service (`GET http://supervisor/services/mqtt`) into the
/// configuration's `mqtt:` section. The answer is `{"result": "ok", "data": {...}}` with
/// `host` and `port` required, `username`, `password`, `ssl` (default false) and `protocol`
/// ("3.1" or "3.1.1", default "3.1.1") optional: the Supervisor's own schema
/// (supervisor/services/modules/mqtt.py, `SCHEMA_SERVICE_MQTT`), which the Mosquitto add-on
/// fills with `core-mosquitto`, 1883 and a user of its own for add-ons.
struct AddonServiceReader {
    let answer: JSONValue
    let shipped: YAMLNode
    private(set) var issues: [ConfigurationIssue] = []

    init(answer: JSONValue, shipped: YAMLNode) {
        self.answer = answer
        self.shipped = shipped
    }

    /// The shipped `mqtt:` section with the service's broker, user and password, or nil.
    mutating func mqttSection() -> YAMLNode? {
        var data = answer
        if let result = answer["result"] {
            guard result == "ok", let inner = answer["data"] else {
                let message = answer["message"]?.stringValue.map { ": \($0.prefix(200))" } ?? ""
                fail("services/mqtt", "the Supervisor did not give the MQTT service (result \(result.stringValue ?? "?")\(message))")
                return nil
            }
            data = inner
        }
        guard case .object = data else {
            fail("services/mqtt", "expected an object, found \(AddonOptionsReader.kind(data))")
            return nil
        }
        guard case .string(let host)? = data["host"], !host.isEmpty else {
            fail("services/mqtt.host", "missing: the broker's host name")
            return nil
        }
        guard case .int(let port)? = data["port"], (1...65_535).contains(port) else {
            fail("services/mqtt.port", "missing or not a port number")
            return nil
        }
        let ssl = data["ssl"]?.boolValue ?? false
        let proto = data["protocol"]?.stringValue ?? "3.1.1"
        // aabridge speaks MQTT 3.1.1 and 5; the Supervisor's other value, 3.1, is older than both.
        guard proto == "3.1.1" else {
            fail("services/mqtt.protocol", "the broker speaks MQTT \(proto.prefix(20)); aabridge needs 3.1.1 or 5")
            return nil
        }
        let entries: [(String, YAMLNode)] = [
            ("server", YAMLWriter.string("\(ssl ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)")),
            ("user", data["username"]?.stringValue.map(YAMLWriter.string) ?? YAMLWriter.plain("null")),
            ("password", data["password"]?.stringValue.map(YAMLWriter.string) ?? YAMLWriter.plain("null")),
            // The service's protocol: the Mosquitto add-on also speaks 5, but says 3.1.1.
            ("version", YAMLWriter.plain("4")),
        ]
        // The rest as shipped (base topic, keepalive, reconnect), so the topics do not change.
        return YAMLWriter.mapping(entries, over: shipped.value(forKey: "mqtt"))
    }

    private mutating func fail(_ path: String, _ message: String) {
        issues.append(ConfigurationIssue(path: path, message: message))
    }
}
