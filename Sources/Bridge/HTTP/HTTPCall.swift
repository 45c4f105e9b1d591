import HTTPServer

/// What the HTTP server asks of the runtime's loop (posted to ``HTTPComponent``'s mailbox): the loop
/// owns the engine and the counters, so every answer is made there, in order with
/// everything else, and handed back through ``reply``.
struct HTTPCall: Sendable {
    enum Kind: Sendable {
        /// `POST /api/request/<name>`: the same request as `bridge/request/<name>`.
        case request(name: String, body: [UInt8])
        /// `GET /metrics`.
        case metrics
        /// `GET /healthz`.
        case health
        /// `GET /events`: send the current state, then every change, to this stream.
        case subscribe(EventStream)
    }

    let kind: Kind
    let reply: HTTPReply
}
