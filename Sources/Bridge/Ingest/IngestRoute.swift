/// What an incoming topic is for, decided once when the message arrives (by ``TopicRouter``
/// in ``RuntimeInbox``) and carried with it to ``Ingest``.
enum IngestRoute: Sendable, Hashable {
    /// `<base>/bridge/request/<name>`.
    case request(name: String)
    /// `<base>/accessory/<ID>/set`, the extension role (the ID as written in the topic).
    case set(accessory: Substring)
    /// Home Assistant's birth/last-will topic.
    case homeAssistantStatus
    /// Telemetry or status of the gateway entry at this index of `gateways:`.
    case gateway(index: Int)
    /// Nothing configured listens to this topic (a subscription overlap, or a stray message).
    case unrouted

    var isRequest: Bool { if case .request = self { true } else { false } }

    /// Telemetry and `/set` updates: what is shed while the broker is behind. Requests and
    /// Home Assistant's status never are.
    var isSheddable: Bool {
        switch self {
        case .set, .gateway: true
        case .request, .homeAssistantStatus, .unrouted: false
        }
    }
}
