import AccessoryKit
import Configuration
import HTTPServer
import JSON
import Synchronization

/// The HTTP server's handler, on the connection's thread: the token or the Host rule, the
/// paths, the limits.
/// Everything about the bridge itself is asked of the loop (``HTTPCall``) and waited for, so
/// the console's actions take exactly the path MQTT requests take.
final class HTTPFrontDoor: Sendable {
    private let token: Secret?
    /// Applies without a token only (see ``HostRule``).
    private let hostRule: HostRule
    private let mailbox: ComponentMailbox
    /// Set by ``HTTPConsole/stop()``: a waiting connection gives up at once.
    let stopping = Atomic<Bool>(false)

    /// How long a request waits for the loop (a commit waits for the disk).
    static let requestLimit: Duration = .seconds(10)
    /// How long `/healthz` and `/metrics` wait: a loop that does not answer within it is not healthy.
    static let probeLimit: Duration = .seconds(5)
    /// The request API's largest body (a request is a few hundred bytes).
    static let maximumBodyBytes = 64 * 1024
    static let tokenCookie = "aabridge_token"

    init(token: Secret?, hostRule: HostRule, mailbox: ComponentMailbox) {
        self.token = token
        self.hostRule = hostRule
        self.mailbox = mailbox
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let ingress = IngressPath.prefix(of: request)
        let path = IngressPath.localPath(request.path, prefix: ingress)
        // First, on every path: without a token a page on another site must not read or
        // change anything, not even the page or the health check.
        if token == nil, let refusal = hostRule.refusal(for: request) { return .text(refusal.status, refusal.message) }
        if let refusal = HostRule.originRefusal(for: request) { return .text(refusal.status, refusal.message) }
        // The page itself holds nothing secret (it asks for the token), and a health check
        // (Docker's HEALTHCHECK, a probe) should not need one.
        if path == "/" || path == "/index.html" {
            guard request.method == "GET" || request.method == "HEAD" else { return Self.methodNotAllowed("GET") }
            // Framed only inside Home Assistant: the prefix came from a listed proxy. A browser
            // cannot add the header to a navigation, so another site's frame never gets it.
            let framed = ingress != nil && hostRule.isTrustedProxy(request.client)
            return .full(
                status: 200, contentType: "text/html; charset=utf-8", body: ConsolePage.html(prefix: ingress ?? ""),
                headers: ConsolePage.headers(framed: framed))
        }
        if path == "/healthz" {
            guard request.method == "GET" || request.method == "HEAD" else { return Self.methodNotAllowed("GET") }
            return ask(.health, limit: Self.probeLimit) ?? .text(503, "the bridge did not answer within 5 s\n")
        }
        guard authorized(request) else {
            // Nothing else said: not whether a token is set, nor what was wrong with it.
            return .full(status: 401, contentType: "text/plain; charset=utf-8", body: [], headers: [("WWW-Authenticate", "Bearer")])
        }
        switch path {
        case "/metrics":
            guard request.method == "GET" else { return Self.methodNotAllowed("GET") }
            return ask(.metrics, limit: Self.probeLimit) ?? .text(503, "the bridge did not answer within 5 s\n")
        case "/events":
            guard request.method == "GET" else { return Self.methodNotAllowed("GET") }
            let stream = EventStream()
            guard let answer = ask(.subscribe(stream), limit: Self.probeLimit) else {
                stream.close()
                return .text(503, "the bridge did not answer within 5 s\n")
            }
            return answer
        default:
            break
        }
        let prefix = "/api/request/"
        guard path.hasPrefix(prefix) else { return .text(404, "not found\n") }
        let name = String(path.dropFirst(prefix.count))
        guard RequestDecoder.names.contains(name) else {
            return Self.requestError(404, .invalidRequest("unknown request '\(name.prefix(60))'", accessoryControl: false))
        }
        guard request.method == "POST" else { return Self.methodNotAllowed("POST") }
        let control = RequestDecoder.isAccessoryControl(name)
        guard !request.bodyTooLarge else {
            return Self.requestError(
                400, .invalidRequest("the body is larger than \(Self.maximumBodyBytes / 1024) KiB", accessoryControl: control))
        }
        return ask(.request(name: name, body: request.body), limit: Self.requestLimit)
            ?? .text(503, "the bridge did not answer within 10 s\n")
    }

    /// Posts `kind` to the loop and waits for its answer (nil: none in time, or stopping).
    private func ask(_ kind: HTTPCall.Kind, limit: Duration) -> HTTPResponse? {
        if stopping.load(ordering: .relaxed) { return nil }
        let reply = HTTPReply()
        mailbox.post(HTTPCall(kind: kind, reply: reply))
        return reply.wait(limit: limit) { stopping.load(ordering: .relaxed) }
    }

    /// `Authorization: Bearer <token>` (the scheme in any case, as RFC 9110 section 11.1 has
    /// it), or the console's cookie (a browser's EventSource cannot set a header). Compared in
    /// constant time.
    private func authorized(_ request: HTTPRequest) -> Bool {
        guard let token else { return true }
        var offered: [String] = []
        if let credentials = Self.bearerCredentials(request.header("authorization")) { offered.append(credentials) }
        for part in (request.header("cookie") ?? "").split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingWhitespace == Self.tokenCookie { offered.append(String(pair[1]).removingPercentEncoding) }
        }
        return offered.contains { Self.constantTimeEqual(Array($0.utf8), Array(token.revealed.utf8)) }
    }

    /// The credentials of a `Bearer` authorization (scheme case-insensitive, then one or
    /// more spaces), or nil.
    static func bearerCredentials(_ header: String?) -> String? {
        guard let header, let space = header.firstIndex(of: " "), header[..<space].lowercased() == "bearer" else { return nil }
        var credentials = header[space...]
        while credentials.first == " " { credentials.removeFirst() }
        return String(credentials)
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    static func methodNotAllowed(_ allowed: String) -> HTTPResponse {
        .full(
            status: 405, contentType: "text/plain; charset=utf-8", body: Array("method not allowed\n".utf8), headers: [("Allow", allowed)])
    }

    /// A refused request in the request API's own error form (as `bridge/response/<name>` says it).
    static func requestError(_ status: Int, _ error: ResponseError) -> HTTPResponse {
        .full(
            status: status, contentType: "application/json", body: Payloads().response(.failure(error), transaction: nil).bytes,
            headers: [])
    }
}

extension String {
    /// `%XX` decoded (the console writes the cookie with encodeURIComponent); the text as it
    /// was when a sequence is not valid.
    fileprivate var removingPercentEncoding: String {
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return self }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
