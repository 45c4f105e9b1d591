/// Quality of service of a publish or subscription. aabridge uses at most once and at least once.
public enum MQTTQoS: Int32, Sendable, Hashable, Comparable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A message received from the broker. Topic and payload are copies owned by Swift: the
/// libmosquitto message they came from is freed as soon as its callback returns.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    /// The payload as UTF-8 text, with invalid sequences repaired (for logs and tests).
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}
