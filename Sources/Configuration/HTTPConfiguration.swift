/// The `http:` section: the console, `/metrics` and `/healthz` (off unless `listen` is set).
public struct HTTPConfiguration: Hashable, Sendable, CustomStringConvertible {
    /// Where the server listens: an IPv4 address and a port (`127.0.0.1:8099`); nil: no server.
    public var listen: Listen?
    /// The bearer token every request but `/` and `/healthz` must carry (nil: none).
    public var token: Secret?
    /// The file `token` was read from, when it came from `token_file`.
    public var tokenFile: String?
    /// Connections served at once; more are closed at once (libmicrohttpd's connection limit).
    public var connectionLimit: Int
    /// Seconds a connection with a request may stay idle before it is closed.
    public var timeoutSeconds: Int
    /// Connections one client address may hold at once; more are closed at once.
    public var connectionsPerClient: Int
    /// Seconds a connection may take, in all, to send its request's headers, counted from its
    /// start (or, kept alive, from its previous request): a total, not an inactivity timeout,
    /// so a client trickling a byte at a time cannot hold its place (issue 49).
    public var headerTimeoutSeconds: Int
    /// Without a token, the `Host` names accepted besides the listen address's own
    /// (lower case; `name` matches any port, `name:port` that port only).
    public var allowedHosts: [String]
    /// Who may connect (empty: anyone who can reach the address). This machine's loopback
    /// addresses may always connect.
    public var allowedClients: [ClientRange]

    /// An IPv4 address and a port.
    public struct Listen: Hashable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `HOST:PORT` with a dotted IPv4 address and a port 1-65535, or nil.
        public init?(_ text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port)
            else { return nil }
            let host = String(text[..<colon])
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ part in part.count <= 3 && UInt8(part) != nil }) else { return nil }
            self.init(host: host, port: port)
        }

        public var description: String { "\(host):\(port)" }
    }

    public init(
        listen: Listen? = nil, token: Secret? = nil, connectionLimit: Int = 32, timeoutSeconds: Int = 30, connectionsPerClient: Int = 8,
        headerTimeoutSeconds: Int = 5, allowedHosts: [String] = [], allowedClients: [ClientRange] = []
    ) {
        self.listen = listen
        self.token = token
        self.connectionLimit = connectionLimit
        self.timeoutSeconds = timeoutSeconds
        self.connectionsPerClient = connectionsPerClient
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.allowedHosts = allowedHosts
        self.allowedClients = allowedClients
    }

    public var description: String {
        "HTTPConfiguration(listen: \(listen?.description ?? "off"), token: \(token == nil ? "none" : "<redacted>"), "
            + "connection_limit: \(connectionLimit), connections_per_client: \(connectionsPerClient), timeout_s: \(timeoutSeconds), "
            + "header_timeout_s: \(headerTimeoutSeconds), allowed_hosts: \(allowedHosts), "
            + "allowed_clients: \(allowedClients.map(\.description)))"
    }
}
