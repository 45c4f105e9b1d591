/// A gateway's availability as announced by its LWT / status topic.
public struct GatewayStatus: Hashable, Sendable {
    /// Online or offline.
    public enum State: String, Hashable, Sendable {
        case online
        case offline
    }

    /// The gateway name taken from the topic (for ESPresense, the room).
    public var gateway: String
    /// The announced state.
    public var state: State
    /// When aabridge received the message, milliseconds since the Unix epoch.
    public var receivedAt: Int64

    /// Creates a status.
    public init(gateway: String, state: State, receivedAt: Int64) {
        self.gateway = gateway
        self.state = state
        self.receivedAt = receivedAt
    }
}
