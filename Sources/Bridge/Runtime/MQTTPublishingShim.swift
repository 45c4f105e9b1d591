import MQTT

// TEMPORARY until the MQTT tidy lands: the protocol and verbs it adds.
public protocol MQTTPublishing: AnyObject, Sendable {
    @discardableResult
    func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) -> Bool
    func publishAcknowledged(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError)
    var outstandingPublishes: Int { get }
    var isConnected: Bool { get }
    var statistics: MQTTStatistics { get }
}

extension MQTTClient: MQTTPublishing {
    @discardableResult
    public func enqueue(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) -> Bool {
        post(topic: topic, payload: payload, qos: qos, retain: retain)
    }
    public func publishAcknowledged(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws(MQTTError) {
        try await publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }
}
