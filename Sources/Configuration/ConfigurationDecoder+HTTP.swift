extension ConfigurationDecoder {
    static let httpKeys = ["listen", "token", "token_file", "connection_limit", "timeout_s"]

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
        if let timeout = integer(section["timeout_s"], at: section.path("timeout_s"), in: 1...3_600) { http.timeoutSeconds = timeout }
        if let (token, file) = secret(section, "token", file: "token_file", refusingEmpty: true) {
            http.token = token
            if let file { http.tokenFile = file }
        }
    }
}
