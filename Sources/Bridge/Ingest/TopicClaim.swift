import MQTT

/// A topic filter a component claims (``RuntimeComponent/claims``): ``TopicRouter`` routes the
/// messages on it to that component (``ClaimedTopic``), and the runtime subscribes to it.
///
/// A claim says how its messages are treated on the way in, so the runtime needs no list of
/// components: a one-off message (a form's press, a status) is never dropped and overtakes a
/// congested backlog; a sheddable one (gateway telemetry) is dropped while the broker is behind.
struct TopicClaim: Sendable, Hashable {
    /// The MQTT filter (`+` and `#` allowed).
    let filter: String
    /// The QoS to subscribe with.
    let qos: MQTTQoS
    /// Said once and never repeated (see ``IngestRoute/isOneOff``).
    let oneOff: Bool
    /// Said again by the next message (see ``IngestRoute/isSheddable``).
    let sheddable: Bool
    /// The component's own number for this claim, handed back with every message on it.
    let tag: Int

    /// A topic said once: QoS 1, never dropped (a form's press, a gateway's status).
    static func oneOff(_ filter: String, tag: Int = 0) -> TopicClaim {
        TopicClaim(filter: filter, qos: .atLeastOnce, oneOff: true, sheddable: false, tag: tag)
    }

    /// A retained topic the broker holds and repeats at each subscription (QoS 1).
    static func mirrored(_ filter: String, tag: Int = 0) -> TopicClaim {
        TopicClaim(filter: filter, qos: .atLeastOnce, oneOff: false, sheddable: false, tag: tag)
    }

    /// Telemetry: QoS 0 (it says what is heard now; the broker must not keep it for a bridge
    /// that is away), shed under congestion.
    static func telemetry(_ filter: String, tag: Int = 0) -> TopicClaim {
        TopicClaim(filter: filter, qos: .atMostOnce, oneOff: false, sheddable: true, tag: tag)
    }
}
