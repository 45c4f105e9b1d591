/// Counters the client keeps for the bridge's health topic.
public struct MQTTStatistics: Sendable, Hashable {
    public var messagesIn = 0
    public var messagesOut = 0
    /// Incoming messages dropped because `messageBufferLimit` messages were waiting already.
    public var messagesDropped = 0
    /// Successful connections after the first one.
    public var reconnects = 0
    public var failedAttempts = 0

    public init(
        messagesIn: Int = 0, messagesOut: Int = 0, messagesDropped: Int = 0, reconnects: Int = 0,
        failedAttempts: Int = 0
    ) {
        self.messagesIn = messagesIn
        self.messagesOut = messagesOut
        self.messagesDropped = messagesDropped
        self.reconnects = reconnects
        self.failedAttempts = failedAttempts
    }
}
