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
        var open = Array(repeating: true, count: slow.count)
        var bytes = Self.endless.makeIterator()
        func trickle() {
            guard let byte = bytes.next() else { return }
            for (index, client) in slow.enumerated() where open[index] { open[index] = client.send([byte]) }
        }
        // 4 s of trickling: every byte restarts an inactivity timeout, never a total deadline.
        for _ in 0..<8 {
            trickle()
            Thread.sleep(forTimeInterval: 0.5)
        }
        // /healthz is asked until it answers, and the trickle goes on meanwhile: connections that
        // only an inactivity timeout would close keep every place, and it never answers. The
        // bound is the deadline's lateness allowed on a loaded machine (the sweep runs every 0.25 s).
        let start = ContinuousClock.now
        var healthz: HTTPTestClient.Response?
        while healthz?.status != 200 && ContinuousClock.now - start < .seconds(8) {
            healthz = try HTTPTestClient.request(port: server.port, "GET", "/healthz", timeout: 5)
            if healthz?.status != 200 {
                trickle()
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        #expect(healthz?.status == 200, "the slow connections were closed, and their places freed, by the deadline")
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
        // A byte every 0.4 s until the server cuts the connection, for at most 10 s (25 bytes):
        // cut near the 2-s deadline is 5 to 7 bytes; 15 allows 4 s of lateness on a loaded machine.
        let start = ContinuousClock.now
        var sent = 0
        for byte in Self.endless where ContinuousClock.now - start < .seconds(10) {
            guard client.send([byte]) else { break }
            sent += 1
            Thread.sleep(forTimeInterval: 0.4)
        }
        #expect(sent < 15, "the second request's trickle was cut near 2 s (\(sent) bytes went)")
        #expect(client.readAll().isEmpty)
    }

    @Test("Closed /events streams free their place at once: 8 open/close cycles with 1 place, then a page loads")
    func eventStreamSlots() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, connectionLimit: 32, perClientLimit: 1, headerTimeoutSeconds: 5, timeoutSeconds: 30
        ) { request in request.path == "/events" ? .events(EventStream()) : .text(200, "page\n") }
        defer { server.stop() }
        // With one place, each cycle's stream opens only once the last cycle's departed client
        // freed it: a connection refused for want of a place is closed at once (an empty reply),
        // and tried again. A place held until the next keepalive write (10 s) fails the bound.
        let bound = Duration.seconds(4)
        var longest = Duration.zero
        for cycle in 0..<8 {
            let start = ContinuousClock.now
            var head = ""
            while !head.contains("text/event-stream") && ContinuousClock.now - start < bound {
                let client = try HTTPTestClient(port: server.port, timeout: 5)
                client.send(Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                head = String(decoding: client.read { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }, as: UTF8.self)
                // The open stream's client is closed here, as a closed or reloaded tab is.
                if !head.contains("text/event-stream") { Thread.sleep(forTimeInterval: 0.05) }
            }
            longest = max(longest, ContinuousClock.now - start)
            #expect(head.contains("text/event-stream"), "cycle \(cycle): the stream opened within \(bound)")
        }
        let start = ContinuousClock.now
        var page: HTTPTestClient.Response?
        while page?.status != 200 && ContinuousClock.now - start < bound {
            page = try HTTPTestClient.request(port: server.port, "GET", "/", timeout: 5)
            if page?.status != 200 { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(page?.status == 200, "the departed streams' places were free (the slowest cycle waited \(longest))")
        #expect(page?.text == "page\n")
    }
}
