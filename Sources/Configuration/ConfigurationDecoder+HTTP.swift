import AccessoryKit

extension ConfigurationDecoder {
    static let httpKeys = [
        "listen", "token", "token_file", "connection_limit", "connections_per_client", "timeout_s", "header_timeout_s", "allowed_hosts",
        "allowed_clients",
    ]

    /// The `http:` section. The token is a secret like the MQTT password: `token` or
    /// `token_file` (read here), never both, never repeated in a message.
    func http(_ node: YAMLNode?, into http: inout HTTPConfiguration) {
        guard let section = fields(node, at: "http", allowed: Self.httpKeys) else { return }
        if let listenNode = section["listen"], !listenNode.isNull, let text = string(listenNode, at: section.path("listen")) {
            if let listen = HTTPConfiguration.Listen(text) {
                http.listen = listen
            } else {
                fail(
                    section.path("listen"),
                    "must be an IPv4 address and a port like 127.0.0.1:8099 (0.0.0.0:8099 for every interface), not '\(text.prefix(60))'",
                    at: listenNode)
            }
        }
        if let limit = integer(section["connection_limit"], at: section.path("connection_limit"), in: 1...1_024) {
            http.connectionLimit = limit
        }
        if let limit = integer(section["connections_per_client"], at: section.path("connections_per_client"), in: 1...1_024) {
            http.connectionsPerClient = limit
        }
        if let timeout = integer(section["timeout_s"], at: section.path("timeout_s"), in: 1...3_600) { http.timeoutSeconds = timeout }
        if let timeout = integer(section["header_timeout_s"], at: section.path("header_timeout_s"), in: 1...300) {
            http.headerTimeoutSeconds = timeout
        }
        if let hosts = textList(section["allowed_hosts"], at: section.path("allowed_hosts")) {
            var accepted: [String] = []
            for (index, (text, node)) in hosts.enumerated() {
                if let host = Self.allowedHost(text) {
                    accepted.append(host)
                } else {
                    fail(
                        "\(section.path("allowed_hosts"))[\(index)]",
                        "must be a host name as a browser sends it in Host, with an optional port (bridge.example, "
                            + "bridge.example:8099, 192.168.1.5:8099), not '\(text.prefix(60))'", at: node)
                }
            }
            http.allowedHosts = accepted
        }
        if let clients = textList(section["allowed_clients"], at: section.path("allowed_clients")) {
            var accepted: [HTTPConfiguration.ClientRange] = []
            for (index, (text, node)) in clients.enumerated() {
                if let range = HTTPConfiguration.ClientRange(text) {
                    accepted.append(range)
                } else {
                    fail(
                        "\(section.path("allowed_clients"))[\(index)]",
                        "must be an IPv4 address or block like 172.30.32.2 or 192.168.1.0/24, not '\(text.prefix(60))'", at: node)
                }
            }
            http.allowedClients = accepted
        }
        if let (token, file) = secret(section, "token", file: "token_file", refusingEmpty: true) {
            http.token = token
            if let file { http.tokenFile = file }
        }
        // Without a token, what keeps a page on another site (DNS rebinding) or another machine
        // out is who can connect: only this machine, or the clients listed.
        if let listen = http.listen, http.token == nil, http.allowedClients.isEmpty,
            let address = HTTPConfiguration.ClientRange.ipv4(Substring(listen.host)),
            !HTTPConfiguration.ClientRange.loopback.contains(address)
        {
            fail(
                section.path("listen"),
                "\(listen) is reachable from other machines, and no token is set: set http.token (or http.token_file), "
                    + "or list in http.allowed_clients the addresses that may connect (a proxy such as Home Assistant's ingress), "
                    + "or listen on 127.0.0.1",
                at: section["listen"])
        }
    }

    /// A list of strings, or one string of comma-separated items (as an `AABRIDGE_HTTP_…`
    /// variable can only be); nil after an issue.
    private func textList(_ node: YAMLNode?, at path: String) -> [(String, YAMLNode)]? {
        guard let node, !node.isNull else { return nil }
        if case .scalar(let scalar) = node.content {
            return scalar.value.split(separator: ",").map { (String($0.trimmingWhitespace), node) }.filter { !$0.0.isEmpty }
        }
        guard let items = list(node, at: path) else { return nil }
        var texts: [(String, YAMLNode)] = []
        for (index, item) in items.enumerated() {
            if let text = string(item, at: "\(path)[\(index)]") { texts.append((text, item)) }
        }
        return texts.count == items.count ? texts : nil
    }

    /// An `allowed_hosts` entry in lower case, or nil: a DNS name or an IPv4 address, or a
    /// bracketed IPv6 address, then an optional `:port`.
    static func allowedHost(_ text: String) -> String? {
        let lower = text.lowercased()
        var name = Substring(lower)
        if let colon = lower.lastIndex(of: ":"), !lower.hasSuffix("]") {
            guard let port = Int(lower[lower.index(after: colon)...]), (1...65_535).contains(port) else { return nil }
            name = lower[..<colon]
        }
        if name.hasPrefix("[") {
            guard name.hasSuffix("]"), name.count > 2, name.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else { return nil }
            return lower
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.count <= 253,
            labels.allSatisfy({ label in
                (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            })
        else { return nil }
        return lower
    }
}
