import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd, for the bridge's console, metrics and health check.
///
/// libmicrohttpd runs one thread per connection (and one that accepts): the handler runs on
/// the connection's thread and may wait there (for the runtime's answer) without holding
/// anything else. The connection limit therefore bounds the threads, and the connection
/// timeout closes a client that stops sending; beyond the limit a new connection is closed
/// at once. One client address may hold only ``perClientLimit`` of them, and a connection
/// whose request has not arrived (a new one, or a kept-alive one between requests) gets only
/// the short header timeout, as a total deadline however slowly its bytes come
/// (``HeaderDeadlines``): idle or trickling connections from one address cannot lock the
/// others out. An event stream whose client has gone frees its place at once (EventStream).
/// A body longer than ``maximumBodyBytes`` is read and thrown away, never kept.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// The headers a handler gets (others are not copied).
    public static let readHeaders = ["authorization", "cookie", "origin", "host", "content-type", "accept", "x-ingress-path"]

    public let maximumBodyBytes: Int
    /// Seconds a connection may take, in all, to send its request's headers (idle or not).
    public let headerTimeoutSeconds: Int
    /// Seconds a connection with a request may stay idle (the handler's answer, a body, a stream).
    public let timeoutSeconds: Int
    /// Decides at accept time whether a client (its IPv4 address in host byte order) may
    /// connect; nil: every client may.
    public typealias ClientPolicy = @Sendable (UInt32) -> Bool
    private let clientPolicy: ClientPolicy?
    /// The port it listens on (the one asked for, or the kernel's choice for 0).
    public var port: Int { boundPort.load(ordering: .relaxed) }
    private let boundPort = Atomic<Int>(0)
    private let handler: Handler
    /// The daemon, nil once stopped. Only ``stop()`` changes it.
    private let daemon: Mutex<Daemon?>
    /// The open event streams: closed by ``stop()`` first, since their connections' threads
    /// wait for events and the daemon's stop waits for every thread.
    /// nil once stopping: a stream opened after that is closed at once.
    private let streams = Mutex<[ObjectIdentifier: EventStream]?>([:])
    private let deadlines: HeaderDeadlines
    private let library: LibMicroHTTPD

    /// The daemon's pointer, owned by this server (libmicrohttpd's own threads use it).
    private struct Daemon: @unchecked Sendable { let pointer: OpaquePointer }

    /// Starts listening on `host:port` (an IPv4 address; port 0 lets the kernel choose).
    /// - Parameters:
    ///   - perClientLimit: connections one client address may hold (nil: `connectionLimit`).
    ///   - headerTimeoutSeconds: how long a connection may take, in all, to send its request's
    ///     headers (nil: `timeoutSeconds`).
    ///   - clientPolicy: who may connect; a refused client's connection is closed at accept.
    /// - Throws: ``HTTPServerError`` when the address is not IPv4, libmicrohttpd cannot be loaded
    ///   or the port cannot be bound.
    public init(
        host: String, port: Int, connectionLimit: Int, perClientLimit: Int? = nil, headerTimeoutSeconds: Int? = nil,
        timeoutSeconds: Int, maximumBodyBytes: Int = 64 * 1024, clientPolicy: ClientPolicy? = nil, handler: @escaping Handler
    ) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError("'\(host)' is not an IPv4 address")
        }
        library = try LibMicroHTTPD.shared()
        self.maximumBodyBytes = maximumBodyBytes
        self.headerTimeoutSeconds = headerTimeoutSeconds ?? timeoutSeconds
        self.timeoutSeconds = timeoutSeconds
        self.clientPolicy = clientPolicy
        self.handler = handler
        deadlines = HeaderDeadlines(seconds: self.headerTimeoutSeconds)
        daemon = Mutex(nil)
        // The port first: a listener that fails leaves nothing behind.
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            let started = aabridge_mhd_start(
                library.startDaemon, &address, UInt32(connectionLimit), UInt32(min(perClientLimit ?? connectionLimit, connectionLimit)),
                UInt32(self.headerTimeoutSeconds), clientPolicy == nil ? nil : Self.accept, context, Self.access, context,
                Self.completed, context, Self.notify, context)
        else {
            deadlines.stop()
            throw HTTPServerError("cannot listen on \(host):\(port) (address in use, or not an address of this machine)")
        }
        boundPort.store(port == 0 ? Int(aabridge_mhd_port(library.getDaemonInfo, started)) : port, ordering: .relaxed)
        daemon.withLock { $0 = Daemon(pointer: started) }
    }

    /// Stops listening and closes every connection, waiting for their threads (a handler
    /// waiting for the runtime must give up first: the bridge's does within a bounded time).
    public func stop() {
        guard
            let running = daemon.withLock({ daemon -> Daemon? in
                defer { daemon = nil }
                return daemon
            })
        else { return }
        let open = streams.withLock { streams -> [EventStream] in
            defer { streams = nil }
            return Array(streams?.values ?? [:].values)
        }
        for stream in open { stream.close() }
        library.stopDaemon(running.pointer)
        deadlines.stop()
    }

    deinit { stop() }

    // MARK: - libmicrohttpd's callbacks

    /// What one request collects across the calls libmicrohttpd makes for it.
    private final class PendingRequest {
        var body: [UInt8] = []
        var tooLarge = false
    }

    private static let access: MHD_AccessHandlerCallback = { context, connection, url, method, _, data, size, pending in
        guard let context, let connection, let url, let method, let size, let pending else { return .NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        // The first call has the headers only: keep a place for the body. From here the
        // connection has a request, and the request's (longer) timeout.
        guard let existing = pending.pointee else {
            pending.pointee = Unmanaged.passRetained(PendingRequest()).toOpaque()
            server.deadlines.clear(connection)
            aabridge_mhd_set_timeout(server.library.setConnectionOption, connection, UInt32(server.timeoutSeconds))
            return .YES
        }
        let request = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()
        if size.pointee > 0 {
            if !request.tooLarge, let data {
                if request.body.count + size.pointee > server.maximumBodyBytes {
                    request.tooLarge = true
                    request.body = []
                } else {
                    request.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size.pointee))
                }
            }
            size.pointee = 0
            return .YES
        }
        var headers: [String: String] = [:]
        for name in readHeaders {
            if let value = server.library.lookupConnectionValue(connection, .HEADER_KIND, name) {
                headers[name] = String(cString: value)
            }
        }
        let response = server.handler(
            HTTPRequest(
                method: String(cString: method), path: String(cString: url), headers: headers, body: request.body,
                bodyTooLarge: request.tooLarge, client: aabridge_mhd_client_ipv4(server.library.getConnectionInfo, connection)))
        if case .events(let stream) = response { server.opened(stream) }
        return queue(response, on: connection, server: context)
    }

    private static let accept: MHD_AcceptPolicyCallback = { context, address, length in
        guard let context else { return .NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        let client = aabridge_ipv4_of(address, length)
        return (server.clientPolicy?(client) ?? true) ? .YES : .NO
    }

    private static let completed: MHD_RequestCompletedCallback = { context, connection, pending, _ in
        // A kept-alive connection waits for its next request's headers: the short timeout again.
        if let context, let connection {
            let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
            aabridge_mhd_set_timeout(server.library.setConnectionOption, connection, UInt32(server.headerTimeoutSeconds))
            server.deadlines.awaitHeaders(connection, descriptor: server.library.descriptor(of: connection))
        }
        guard let pending, let existing = pending.pointee else { return }
        Unmanaged<PendingRequest>.fromOpaque(existing).release()
        pending.pointee = nil
    }

    /// A connection started (its header deadline begins) or closed (it has none any more).
    private static let notify: MHD_NotifyConnectionCallback = { context, connection, _, code in
        guard let context, let connection else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        if aabridge_mhd_is_start(code) != 0 {
            server.deadlines.awaitHeaders(connection, descriptor: server.library.descriptor(of: connection))
        } else {
            server.deadlines.clear(connection)
        }
    }

    /// Tracks an event stream until its connection ends (or closes it at once when stopping).
    private func opened(_ stream: EventStream) {
        let tracked = streams.withLock { streams -> Bool in
            guard streams != nil else { return false }
            streams![ObjectIdentifier(stream)] = stream
            return true
        }
        if !tracked { stream.close() }
    }

    fileprivate func ended(_ stream: EventStream) {
        stream.close()
        streams.withLock { _ = $0?.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// What the event stream's callbacks get: the stream, the server to tell when it ends, and
    /// the connection's socket, to notice the client leaving while the stream waits.
    private final class StreamContext {
        let stream: EventStream
        let server: UnsafeMutableRawPointer
        let descriptor: Int32
        init(stream: EventStream, server: UnsafeMutableRawPointer, descriptor: Int32) {
            self.stream = stream
            self.server = server
            self.descriptor = descriptor
        }
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, server: UnsafeMutableRawPointer) -> MHD_Result {
        let library = Unmanaged<HTTPServer>.fromOpaque(server).takeUnretainedValue().library
        let made: OpaquePointer?
        var headers: [(String, String)] = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")]
        switch response {
        case .full(_, let contentType, let body, let extra):
            made = body.withUnsafeBytes {
                aabridge_mhd_copied_response(library.createResponseFromBuffer, body.count, $0.baseAddress)
            }
            headers.append(("Content-Type", contentType))
            headers.append(contentsOf: extra)
        case .events(let stream):
            made = library.createResponseFromCallback(
                UInt64.max, 4096, readEvents,
                Unmanaged.passRetained(
                    StreamContext(stream: stream, server: server, descriptor: library.descriptor(of: connection))
                ).toOpaque(),
                releaseEvents)
            headers.append(("Content-Type", "text/event-stream"))
        }
        guard let made else { return .NO }
        defer { library.destroyResponse(made) }
        for (name, value) in headers { _ = library.addResponseHeader(made, name, value) }
        return library.queueResponse(connection, UInt32(response.status), made)
    }

    private static let readEvents: MHD_ContentReaderCallback = { context, _, buffer, maximum in
        guard let context, let buffer else { return aabridge_mhd_end_of_stream() }
        let events = Unmanaged<StreamContext>.fromOpaque(context).takeUnretainedValue()
        // The reader runs on the connection's thread, so libmicrohttpd cannot watch the socket
        // while it waits: the stream looks at it itself, and a client gone ends the connection.
        let descriptor = events.descriptor
        switch events.stream.read(
            into: UnsafeMutableRawBufferPointer(start: buffer, count: maximum),
            clientGone: { descriptor >= 0 && aabridge_socket_peer_gone(descriptor) != 0 })
        {
        case .bytes(let count): return count
        case .end: return aabridge_mhd_end_of_stream()
        case .clientGone: return aabridge_mhd_end_with_error()
        }
    }

    /// The response is gone (written out, or the client left): the stream is closed, so
    /// the runtime stops sending to it.
    private static let releaseEvents: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let ended = Unmanaged<StreamContext>.fromOpaque(context).takeRetainedValue()
        Unmanaged<HTTPServer>.fromOpaque(ended.server).takeUnretainedValue().ended(ended.stream)
    }
}
