import Foundation
import HTTPServer
import TestSupport
import Testing

/// Clients that hold a connection without using it (issue 49): headers trickled a byte at a
/// time, and event streams whose browser has gone. Real sockets on 127.0.0.1; one address
/// with a small per-client limit, as the add-on's ingress proxy is one address.
@Suite("HTTP server: slow and departed clients")
struct HTTPServerSlowClientTests {
    /// A request line and a header that never end, sent a byte at a time.
    static let endless = Array("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: \(String(repeating: "a", count: 200))".utf8)

    @Test("Headers trickled a byte every 0.5 s are cut at the 2-s header deadline; /healthz from the same address answers")
    func slowHeaders() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 32, perClientLimit: 4, headerTimeoutSeconds: 2, timeoutSeconds: 30
        ) { _ in .text(200, "ok\n") }
        defer { server.stop() }
        let slow = try (0..<4).map { _ in try HTTPTestClient(port: server.port, timeout: 10) }
        // 4 s of trickling: every byte restarts an inactivity timeout, never a total deadline.
        var open = Array(repeating: true, count: slow.count)
        for byte in Self.endless.prefix(8) {
            for (index, client) in slow.enumerated() where open[index] { open[index] = client.send([byte]) }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let healthz = try HTTPTestClient.request(port: server.port, "GET", "/healthz", timeout: 5)
        #expect(healthz.status == 200, "the slow connections were closed, and their places freed, by the deadline")
        for client in slow {
            let start = ContinuousClock.now
            #expect(client.readAll().isEmpty)
            #expect(ContinuousClock.now - start < .seconds(2), "already closed by the server, not by our receive timeout")
        }
    }

    @Test("A kept-alive connection gets a new header deadline after each request, and it holds too")
    func keptAliveDeadline() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 8, headerTimeoutSeconds: 2, timeoutSeconds: 30
        ) { _ in .text(200, "ok\n") }
        defer { server.stop() }
        let client = try HTTPTestClient(port: server.port, timeout: 10)
        client.send(Array("GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let first = client.read { String(decoding: $0, as: UTF8.self).hasSuffix("ok\n") }
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        let start = ContinuousClock.now
        var sent = 0
        for byte in Self.endless where ContinuousClock.now - start < .seconds(5) {
            guard client.send([byte]) else { break }
            sent += 1
            Thread.sleep(forTimeInterval: 0.4)
        }
        #expect(sent < 10, "the second request's trickle was cut near 2 s (\(sent) bytes went)")
        #expect(client.readAll().isEmpty)
    }

    @Test("Closed /events streams free their place at once: 8 open/close cycles with 2 places, then a page loads")
    func eventStreamSlots() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 32, perClientLimit: 2, headerTimeoutSeconds: 5, timeoutSeconds: 30
        ) { request in request.path == "/events" ? .events(EventStream()) : .text(200, "page\n") }
        defer { server.stop() }
        for cycle in 0..<8 {
            let client = try HTTPTestClient(port: server.port, timeout: 5)
            client.send(Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            let head = String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }, as: UTF8.self)
            #expect(head.contains("text/event-stream"), "cycle \(cycle): the stream opened")
            // The client is closed at the end of the cycle, as a closed or reloaded tab is.
            Thread.sleep(forTimeInterval: 0.5)
        }
        let page = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5)
        #expect(page.status == 200, "the departed streams' places were free")
        #expect(page.text == "page\n")
    }
}
