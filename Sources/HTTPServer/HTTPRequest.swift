/// One HTTP request as the server read it: what a handler decides on.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, ...
    public var method: String
    /// The path, without the query string (libmicrohttpd keeps that apart).
    public var path: String
    /// The headers the bridge looks at, by lower-case name (see ``HTTPServer/readHeaders``).
    public var headers: [String: String]
    /// The body, at most the server's ``HTTPServer/maximumBodyBytes``.
    public var body: [UInt8]
    /// The body was longer than that: it was read and thrown away, so `body` is empty.
    public var bodyTooLarge: Bool
    /// The client's IPv4 address in host byte order (0 when unknown).
    public var client: UInt32

    public init(
        method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], bodyTooLarge: Bool = false, client: UInt32 = 0
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.client = client
    }

    /// A header's value by its (case-insensitive) name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
