import Configuration
import HTTPServer
import Testing

@testable import Bridge

/// The console behind Home Assistant's ingress (issue 37): the prefix from `X-Ingress-Path`,
/// only in its documented shape, and frames allowed only for the listed proxy. The page
/// through a stand-in proxy in Chromium is ha-addon/tests/test_addon.py.
@Suite("HTTP console behind Home Assistant's ingress")
struct HTTPIngressTests {
    static let prefix = "/api/hassio_ingress/Ab3_-9xYz0123456789abcdefghijklmnopqrstuvw"
    /// 172.30.32.2, the Supervisor's proxy, in host byte order.
    static let supervisor: UInt32 = 0xAC1E_2002

    static func door() -> HTTPFrontDoor {
        let (_, continuation) = AsyncStream<RuntimeEvent>.makeStream()
        let rule = HostRule(
            listen: .init(host: "0.0.0.0", port: 8099), allowedHosts: [],
            allowedClients: [HTTPConfiguration.ClientRange("172.30.32.2")!])
        return HTTPFrontDoor(token: nil, hostRule: rule, mailbox: ComponentMailbox(index: 0, sink: continuation))
    }

    static func page(_ door: HTTPFrontDoor, ingress: String?, client: UInt32, path: String = "/") -> (String, [String: String]) {
        // A loopback client is held to the Host rule (the listen address's names); the proxy is not.
        var headers = ["host": client == Self.supervisor ? "homeassistant.local:8123" : "127.0.0.1:8099"]
        if let ingress { headers["x-ingress-path"] = ingress }
        guard
            case .full(200, _, let body, let fields) = door.handle(HTTPRequest(method: "GET", path: path, headers: headers, client: client))
        else { return ("", [:]) }
        return (String(decoding: body, as: UTF8.self), Dictionary(fields, uniquingKeysWith: { $1 }))
    }

    @Test("only /api/hassio_ingress/<token> with a URL-safe token is a prefix; anything else is ignored")
    func shape() {
        let valid = [Self.prefix, Self.prefix + "/", "/api/hassio_ingress/a"]
        for value in valid {
            #expect(IngressPath.prefix(of: HTTPRequest(method: "GET", path: "/", headers: ["x-ingress-path": value])) != nil, "\(value)")
        }
        let invalid = [
            "", "/", "/api/hassio_ingress/", "/api/hassio_ingress/a/b", "/api/hassio_ingress/a b", "/api/hassio_ingress/a\"><script>",
            "/other/a", "https://evil.example/api/hassio_ingress/a", "/api/hassio_ingress/" + String(repeating: "a", count: 129),
            "/api/hassio_ingress/ä", "//evil.example",
        ]
        for value in invalid {
            #expect(IngressPath.prefix(of: HTTPRequest(method: "GET", path: "/", headers: ["x-ingress-path": value])) == nil, "\(value)")
        }
        #expect(IngressPath.localPath(Self.prefix + "/events", prefix: Self.prefix) == "/events", "a proxy that did not strip it")
        #expect(IngressPath.localPath(Self.prefix, prefix: Self.prefix) == "/")
        #expect(IngressPath.localPath("/events", prefix: Self.prefix) == "/events")
    }

    @Test("through the Supervisor's proxy: the page names the prefix and may be framed by its own origin")
    func framedThroughIngress() {
        let (body, headers) = Self.page(Self.door(), ingress: Self.prefix, client: Self.supervisor)
        #expect(body.contains("<html lang=\"en\" data-base=\"\(Self.prefix)\">"))
        #expect(headers["X-Frame-Options"] == "SAMEORIGIN")
        #expect(headers["Content-Security-Policy"]?.contains("frame-ancestors 'self'") == true)
        #expect(!body.contains("fetch(\"/"), "the script names no absolute path of its own")
        #expect(!body.contains("EventSource(\"/"))
    }

    @Test("reached directly, from loopback, or with a forged header: no prefix, no frames")
    func notFramedOtherwise() {
        let door = Self.door()
        for (ingress, client) in [(nil, Self.supervisor), (Self.prefix, 0x7F00_0001), ("/api/hassio_ingress/x\"><b>", Self.supervisor)] {
            let (body, headers) = Self.page(door, ingress: ingress, client: client)
            #expect(headers["X-Frame-Options"] == "DENY", "\(String(describing: ingress)) \(client)")
            #expect(headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
            if ingress?.contains("\"") == true {
                #expect(body.hasPrefix("<!doctype html>\n<html lang=\"en\">\n"), "a malformed prefix is never written into the page")
            }
        }
        // The loopback case still names the prefix (the page works behind any proxy), but may not be framed.
        #expect(Self.page(door, ingress: Self.prefix, client: 0x7F00_0001).0.contains("data-base=\"\(Self.prefix)\""))
    }

    @Test("a proxy that forwards the prefixed path is served the same page")
    func unstrippedPath() {
        let (body, _) = Self.page(Self.door(), ingress: Self.prefix, client: Self.supervisor, path: Self.prefix + "/")
        #expect(body.contains("data-base=\"\(Self.prefix)\""))
    }
}
