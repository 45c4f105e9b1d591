/// Turns one MQTT message from a configured gateway into a ``TelemetryMessage``.
///
/// One parser per `gateways:` entry. It never throws and never traps: anything malformed becomes
/// ``TelemetryMessage/rejected(_:)`` with a reason, and a value is only produced when the whole
/// message was valid. It holds no mutable state, so one instance can be shared across tasks.
public struct TelemetryParser: Hashable, Sendable {
    /// The gateway software.
    public var format: GatewayFormat
    /// Telemetry subscription; the gateway name is taken from its first `+` (ESPresense: the room, the last level).
    public var topic: TopicPattern
    /// Availability subscription, if the format has one.
    public var statusTopic: TopicPattern?
    /// The configured gateway label, used when the topic pattern has no `+` to name the gateway.
    public var name: String

    /// Creates a parser.
    /// - Parameters:
    ///   - format: The gateway software.
    ///   - topic: Telemetry topic filter; `nil` takes the format's default.
    ///   - statusTopic: Status topic filter; `nil` takes the format's default.
    ///   - baseTopic: `mqtt.base_topic`, for the native format's default topic.
    ///   - name: The configured gateway label.
    public init(
        format: GatewayFormat, topic: TopicPattern? = nil, statusTopic: TopicPattern? = nil, baseTopic: String = "aabridge",
        name: String? = nil
    ) {
        self.format = format
        // The defaults are valid filters unless the base topic itself contains a wildcard, which
        // the configuration rejects; fall back to a filter that matches nothing rather than trap.
        self.topic = topic ?? TopicPattern(format.defaultTopic(baseTopic: baseTopic)) ?? TopicPattern("$aabridge/none")!
        self.statusTopic = statusTopic ?? format.defaultStatusTopic.flatMap(TopicPattern.init)
        self.name = name ?? format.rawValue
    }

    /// Parses a message.
    /// - Parameters:
    ///   - topic: The MQTT topic it arrived on.
    ///   - payload: The raw payload bytes.
    ///   - receivedAt: Reception time, milliseconds since the Unix epoch.
    public func parse(topic: String, payload: [UInt8], receivedAt: Int64) -> TelemetryMessage {
        payload.withUnsafeBytes { parse(topic: topic, payload: $0, receivedAt: receivedAt) }
    }

    /// Parses a message whose payload is borrowed (e.g. straight from the MQTT client's buffer).
    public func parse(topic: String, payload: UnsafeRawBufferPointer, receivedAt: Int64) -> TelemetryMessage {
        parse(topic: topic, payload: payload, receivedAt: receivedAt, notStatus: false)
    }

    /// Parses a message that a router has already found not to be on the status topic (it
    /// matched the status pattern first): the status pattern is not matched again.
    public func parseTelemetry(topic: String, payload: [UInt8], receivedAt: Int64) -> TelemetryMessage {
        payload.withUnsafeBytes { parse(topic: topic, payload: $0, receivedAt: receivedAt, notStatus: true) }
    }

    private func parse(topic: String, payload: UnsafeRawBufferPointer, receivedAt: Int64, notStatus: Bool) -> TelemetryMessage {
        guard payload.count <= TelemetryLimits.maximumPayloadSize else {
            return .rejected(
                TelemetryRejection(.payloadTooLarge, "payload of \(payload.count) bytes exceeds \(TelemetryLimits.maximumPayloadSize)"))
        }
        if !notStatus, let statusTopic, let captures = statusTopic.match(topic, keepingAtMost: 1) {
            return Self.parseStatus(payload, gateway: captures.first ?? name, receivedAt: receivedAt)
        }
        // Only native telemetry reads a capture after the first (its accessory's level); the
        // others name the gateway after the first `+` at most.
        guard let captures = self.topic.match(topic, keepingAtMost: format == .native ? .max : 1) else {
            return .ignored("topic \(JSONFields.excerpt(KeyedTopic.redacted(topic))) does not match \(self.topic) or the status topic")
        }
        let gateway = gatewayName(topic: topic, captures: captures)
        let result: Result<TelemetryMessage, TelemetryRejection>
        switch format {
        // The relay writes OpenMQTTGateway's shape: one parser, one set of refusals.
        case .openmqttgateway, .theengs, .haRelay:
            result = Result { () throws(TelemetryRejection) in
                try Self.parseOpenMQTTGateway(payload, gateway: gateway, receivedAt: receivedAt, readsArea: format == .haRelay)
            }
        case .espresense:
            result = Result { () throws(TelemetryRejection) in try Self.parseESPresense(payload, gateway: gateway, receivedAt: receivedAt) }
        case .tasmota:
            result = Result { () throws(TelemetryRejection) in try Self.parseTasmota(payload, gateway: gateway, receivedAt: receivedAt) }
        case .native:
            return parseNative(topic: topic, captures: captures, payload: payload)
        case .bluez:
            return .ignored("a bluez entry is heard over D-Bus, not on MQTT")
        }
        switch result {
        case .success(let message): return message
        case .failure(var rejection):
            rejection.gateway = gateway
            return .rejected(rejection)
        }
    }

    /// Refuses an advertisement whose proximity-pairing message no genuine accessory sends (a
    /// counterfeit's, or one that contradicts itself): the message as a whole, so nothing of it is published
    /// (docs/telemetry.md, "Refused frames"). Called by the parsers of formats that carry
    /// manufacturer data, on the advertisement before it is wrapped (no copy of it).
    public static func refuseMalformedProximityPairing(_ advertisement: Advertisement, field: String) throws(TelemetryRejection) {
        guard let malformation = advertisement.proximityPairingMalformation else { return }
        throw TelemetryRejection(.invalidProximityPairing, "Apple proximity pairing refused: \(malformation)", field: field)
    }

    /// Whether a topic belongs to this gateway (its telemetry or status pattern matches), so a
    /// bridge with several gateways can pick the parser for a message.
    public func handles(topic: String) -> Bool {
        statusTopic?.matches(topic) == true || self.topic.matches(topic)
    }

    /// ESPresense publishes per room: `espresense/devices/<device id>/<room>`; the room is the gateway.
    /// Other formats name the gateway at the pattern's first `+`.
    ///
    /// A level that carries a key (``KeyedTopic``) is never a gateway's name: it would be echoed
    /// in every log line, metric label and sensor of that gateway. An ESPresense topic without
    /// its room level (`espresense/devices/irk:<hex>`) would otherwise name the gateway after the
    /// device's id; it takes the entry's name, as an empty room does.
    func gatewayName(topic: String, captures: [String]) -> String {
        let candidate: String
        if format == .espresense {
            let levels = topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).count
            guard levels >= espresenseLevels, let last = topic.utf8.lastIndex(of: UInt8(ascii: "/")) else { return name }
            candidate = String(topic[topic.utf8.index(after: last)...])
        } else {
            candidate = self.topic.singleLevelWildcards > 0 ? captures[0] : name
        }
        return candidate.isEmpty || KeyedTopic.carriesKey(candidate) ? name : candidate
    }

    /// How many levels an ESPresense topic has with its device id and room: the filter's
    /// (`espresense/devices/#`: the `#` stands for both, one level more than the filter has).
    var espresenseLevels: Int {
        let levels = topic.levels.count
        return topic.levels.last?.kind == .multi ? levels + 1 : levels
    }

    /// `online` / `offline` in any case, surrounding whitespace allowed.
    static func parseStatus(_ payload: UnsafeRawBufferPointer, gateway: String, receivedAt: Int64) -> TelemetryMessage {
        var start = 0, end = payload.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while start < end, isSpace(payload[start]) { start += 1 }
        while end > start, isSpace(payload[end - 1]) { end -= 1 }
        let word = UnsafeRawBufferPointer(rebasing: payload[start..<end])
        func equalsIgnoringCase(_ literal: String) -> Bool {
            word.count == literal.utf8.count && zip(word, literal.utf8).allSatisfy { $0 | 0x20 == $1 }
        }
        if equalsIgnoringCase("online") { return .gatewayStatus(GatewayStatus(gateway: gateway, state: .online, receivedAt: receivedAt)) }
        if equalsIgnoringCase("offline") { return .gatewayStatus(GatewayStatus(gateway: gateway, state: .offline, receivedAt: receivedAt)) }
        let text = JSONFields.excerpt(String(decoding: word.prefix(64), as: UTF8.self))
        return .rejected(TelemetryRejection(.invalidValue, "status \(text) is neither online nor offline", gateway: gateway))
    }
}
