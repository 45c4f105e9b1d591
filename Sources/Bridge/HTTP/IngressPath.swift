import HTTPServer

/// The path prefix under which Home Assistant's ingress shows the console: the browser asks for
/// `/api/hassio_ingress/<token>/events`, Home Assistant forwards `/events` with
/// `X-Ingress-Path: /api/hassio_ingress/<token>` (developers.home-assistant.io, "Presenting your
/// add-on", Ingress), and the page must name that prefix for its own requests.
///
/// The header is written into the page, so only that exact shape is taken: the fixed
/// beginning and a token of letters, digits, `_` and `-` (Home Assistant's tokens are URL-safe
/// base64). Anything else is ignored, never reflected: the page is then served as to a browser
/// that reached this server itself.
enum IngressPath {
    static let header = "x-ingress-path"
    private static let start = "/api/hassio_ingress/"
    /// Home Assistant's tokens are 43 characters; a much longer value is not one.
    private static let maximumTokenLength = 128

    /// The prefix the request came through (without a trailing slash), or nil.
    static func prefix(of request: HTTPRequest) -> String? {
        guard var value = request.header(header) else { return nil }
        if value.hasSuffix("/") { value.removeLast() }
        guard value.hasPrefix(start) else { return nil }
        let token = value.utf8.dropFirst(start.utf8.count)
        guard (1...maximumTokenLength).contains(token.count),
            token.allSatisfy({ byte in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            })
        else { return nil }
        return value
    }

    /// `path` as this server names it: Home Assistant strips the prefix before forwarding,
    /// but a proxy that does not is served the same.
    static func localPath(_ path: String, prefix: String?) -> String {
        guard let prefix, path.hasPrefix(prefix) else { return path }
        let rest = String(path.dropFirst(prefix.count))
        return rest.isEmpty ? "/" : rest
    }
}
