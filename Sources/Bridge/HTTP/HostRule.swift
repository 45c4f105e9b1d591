import Configuration
import HTTPServer

/// What keeps a page on another site out of a console without a token (DNS rebinding): the
/// browser sends the name the page was loaded from as `Host`, and a rebinding page's name
/// is the attacker's, never this server's. So without a token only the listen address's own
/// names and `http.allowed_hosts` are served, on every path. With a token, the token decides
/// (a rebinding page cannot send it) and this rule does not apply.
///
/// A client listed in `http.allowed_clients` that is not this machine's loopback is a proxy
/// that checked its user itself (Home Assistant's ingress requires a Home Assistant login)
/// and forwards whatever `Host` the browser used for it, so its `Host` is not checked. A
/// loopback client always is: a browser on this machine connects from loopback.
struct HostRule: Sendable {
    /// The accepted `Host` values with their port (lower case).
    private let exact: Set<String>
    /// `allowed_hosts` names written without a port: any port.
    private let anyPort: Set<String>
    private let trustedProxies: [HTTPConfiguration.ClientRange]

    /// Why a request was refused: the status and a line for the client.
    struct Refusal: Error, Equatable {
        var status: Int
        var message: String
    }

    init(listen: HTTPConfiguration.Listen, allowedHosts: [String], allowedClients: [HTTPConfiguration.ClientRange]) {
        let port = listen.port
        var names = ["127.0.0.1", "localhost", "[::1]"]
        if listen.host != "0.0.0.0" { names.append(listen.host) }
        var exact = Set(names.map { "\($0):\(port)" })
        // A browser leaves out the default port.
        if port == 80 { exact.formUnion(names) }
        var anyPort: Set<String> = []
        for host in allowedHosts {
            if host.hasSuffix("]") || !host.contains(":") { anyPort.insert(host) } else { exact.insert(host) }
        }
        self.exact = exact
        self.anyPort = anyPort
        trustedProxies = allowedClients.filter { !HTTPConfiguration.ClientRange.loopback.contains($0.network) }
    }

    /// nil when `request` may be served by a server without a token.
    func refusal(for request: HTTPRequest) -> Refusal? {
        guard let host = request.header("host")?.lowercased(), !host.isEmpty else {
            return Refusal(status: 400, message: "a Host header is required\n")
        }
        if isTrustedProxy(request.client) { return nil }
        if exact.contains(host) || anyPort.contains(Self.name(of: host)) { return nil }
        return Refusal(status: 403, message: "Host not served here (see http.allowed_hosts)\n")
    }

    /// Whether `client` (IPv4, host byte order) is a listed `http.allowed_clients` address that
    /// is not this machine's loopback: a proxy such as Home Assistant's ingress.
    func isTrustedProxy(_ client: UInt32) -> Bool {
        trustedProxies.contains { $0.contains(client) }
    }

    /// `Origin` must be this server as the browser named it (`http://` or `https://` and the
    /// `Host`): a page on another site may make the browser send a "simple" request without
    /// asking. nil when there is no Origin (not a browser, or a same-origin navigation).
    static func originRefusal(for request: HTTPRequest) -> Refusal? {
        guard let origin = request.header("origin")?.lowercased() else { return nil }
        guard let host = request.header("host")?.lowercased(), origin == "http://\(host)" || origin == "https://\(host)" else {
            return Refusal(status: 403, message: "cross-origin request refused\n")
        }
        return nil
    }

    /// The name of a `Host` value without its port (`[::1]` stays bracketed).
    private static func name(of host: String) -> String {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { return String(host[...close]) }
        guard let colon = host.lastIndex(of: ":") else { return host }
        return String(host[..<colon])
    }
}
