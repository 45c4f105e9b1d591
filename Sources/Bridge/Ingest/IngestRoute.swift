/// What an incoming topic is for, decided once when the message arrives (by ``TopicRouter``
/// in ``RuntimeInbox``) and carried with it into the loop.
enum IngestRoute: Sendable, Hashable {
    /// `<base>/bridge/request/<name>`.
    case request(name: String)
    /// `<base>/accessory/<ID>/set`, the extension role (the ID as written in the topic).
    case set(accessory: Substring)
    /// A topic a component claimed (``TopicClaim``): the pairing and re-attach forms, Home
    /// Assistant's status, a source's gateway topics, the cluster's mirrors.
    case claimed(ClaimedTopic)
    /// Nothing configured listens to this topic (a subscription overlap, or a stray message).
    case unrouted

    var isRequest: Bool { if case .request = self { true } else { false } }

    /// Messages sent once and never repeated: requests, `/set` updates (a `source_disconnected`
    /// is not said again), and claims that say so (Home Assistant's status, a gateway's status:
    /// its will says `offline` once; a form's press). They are never shed, and under congestion
    /// they take the ``RequestLane`` past the telemetry backlog.
    var isOneOff: Bool {
        switch self {
        case .request, .set: true
        case .claimed(let claimed): claimed.oneOff
        case .unrouted: false
        }
    }

    /// Telemetry: what is shed while the broker is behind (the next advertisement says it again).
    var isSheddable: Bool { if case .claimed(let claimed) = self { claimed.sheddable } else { false } }
}
