import AccessoryKit

/// What an incoming topic is for, decided once when the message arrives (by ``TopicRouter``
/// in ``RuntimeInbox``) and carried with it to ``Ingest``.
enum IngestRoute: Sendable, Hashable {
    /// `<base>/bridge/request/<name>`.
    case request(name: String)
    /// `<base>/accessory/<ID>/set`, the extension role (the ID as written in the topic).
    case set(accessory: Substring)
    /// `<base>/bridge/pairing/set`: the pairing form behind Home Assistant's Pair button
    /// (``PairingFormComponent``).
    case pairing
    /// `<base>/bridge/reattach/set`: the re-attach form behind Home Assistant's Re-attach
    /// button (``ReattachFormComponent``).
    case reattach
    /// A topic cluster mode mirrors from the broker (``ClusterComponent``).
    case cluster(ClusterTopic)
    /// Home Assistant's birth/last-will topic.
    case homeAssistantStatus
    /// Telemetry (or, with `status`, the status topic: `online`/`offline`) of the gateway
    /// entry at this index of `gateways:`.
    case gateway(index: Int, status: Bool = false)
    /// Nothing configured listens to this topic (a subscription overlap, or a stray message).
    case unrouted

    /// What a cluster instance reads of what the broker holds.
    enum ClusterTopic: Sendable, Hashable {
        /// `<base>/bridge/state` (a peer's will says `offline` there).
        case bridgeState
        /// `<base>/accessory/<ID>`, whichever instance published it.
        case accessoryState(BluetoothAddress)
        /// `<base>/source/<ID>/route`, whichever instance published it.
        case sourceRoute(BluetoothAddress)
    }

    var isRequest: Bool { if case .request = self { true } else { false } }

    /// The component claim that routes this topic (nil: the stages' own).
    var claim: TopicClaim? {
        switch self {
        case .pairing: .pairingForm
        case .reattach: .reattachForm
        case .cluster: .clusterMirrors
        case .request, .set, .homeAssistantStatus, .gateway, .unrouted: nil
        }
    }

    /// Messages sent once and never repeated: requests, `/set` updates (a `source_disconnected`
    /// is not said again), Home Assistant's status and a gateway's status (its will says
    /// `offline` once). They are never shed, and under congestion they take the
    /// ``RequestLane`` past the telemetry backlog.
    var isOneOff: Bool {
        switch self {
        case .request, .set, .pairing, .reattach, .homeAssistantStatus: true
        case .gateway(_, let status): status
        case .cluster, .unrouted: false
        }
    }

    /// Gateway telemetry: what is shed while the broker is behind (the next advertisement
    /// says it again).
    var isSheddable: Bool { if case .gateway(_, false) = self { true } else { false } }
}
