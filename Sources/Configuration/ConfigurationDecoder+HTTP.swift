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
        let tokenNode = section["token"].flatMap { $0.isNull ? nil : $0 }
        let fileNode = section["token_file"].flatMap { $0.isNull ? nil : $0 }
        if let tokenNode, fileNode != nil {
            fail(section.path("token"), "give token or token_file, not both", at: tokenNode)
            return
        }
        if let tokenNode {
            guard let token = string(tokenNode, at: section.path("token")) else { return }
            guard !token.isEmpty else { return fail(section.path("token"), "must not be empty", at: tokenNode) }
            http.token = Secret(token)
            return
        }
        guard let fileNode, let path = string(fileNode, at: section.path("token_file")) else { return }
        guard !path.isEmpty else { return fail(section.path("token_file"), "must not be empty", at: fileNode) }
        switch Self.readSecret(path: path) {
        case .success(let secret):
            http.token = Secret(secret)
            http.tokenFile = path
        case .failure(let problem):
            fail(section.path("token_file"), problem.message, at: fileNode)
        }
    }
}
