/// What a handler answers: a whole body, or a stream of server-sent events.
public enum HTTPResponse: Sendable {
    case full(status: Int, contentType: String, body: [UInt8], headers: [(String, String)])
    /// `text/event-stream`: the connection stays open while the stream does.
    case events(EventStream)

    /// A body given as text.
    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        .full(status: status, contentType: contentType, body: Array(text.utf8), headers: [])
    }

    /// The status code.
    public var status: Int {
        switch self {
        case .full(let status, _, _, _): status
        case .events: 200
        }
    }
}
