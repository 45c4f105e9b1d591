import Foundation
import Synchronization

/// A TCP proxy on a free loopback port in front of a real server (a test broker), which a
/// test can make misbehave the way a network does: hold back what the client sends, cut every
/// connection at once, refuse new ones.
///
/// Holding back the client's bytes keeps its QoS 1 publishes *in flight* (sent by the client,
/// never acknowledged), which is the state reconnect-order defects need and which freezing the
/// broker cannot give: a frozen broker's socket buffers still take the bytes, and the broker
/// reads them when it wakes. A cut then drops what was held, as a lost link does.
///
/// Each connection has two pump threads doing blocking reads and writes; ``cut()`` shuts the
/// sockets down, which ends both.
public final class TCPProxy: Sendable {
    private struct State {
        var holdingUpstream = false
        var refusing = false
        var held: [Int32: [UInt8]] = [:]
        var connections: [(client: Int32, server: Int32)] = []
        var accepted = 0
    }

    public let port: Int
    private let targetPort: Int
    private let listener: Int32
    private let state = Mutex(State())

    /// Listens on 127.0.0.1 and forwards every connection to 127.0.0.1:`targetPort`.
    public init(to targetPort: Int) throws {
        self.targetPort = targetPort
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BrokerError("proxy: socket() failed: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw BrokerError("proxy: cannot listen on 127.0.0.1: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "tcp-proxy-\(port)"
        thread.start()
    }

    deinit {
        close(listener)
    }

    /// Stops listening and cuts every connection. (The accepting thread holds the proxy until
    /// then.)
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    /// Connections accepted so far (refused ones included).
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// From now on, what clients send is kept here instead of reaching the server (the server's
    /// side still flows to the client).
    public func holdUpstream() { state.withLock { $0.holdingUpstream = true } }

    /// Closes every connection at once, dropping what ``holdUpstream()`` kept, and stops
    /// holding.
    public func cut() {
        // Under the lock, as the pumps close descriptors under it: a descriptor shut down here
        // is still this proxy's, never a number the kernel has given to someone else since.
        state.withLock { state in
            for connection in state.connections {
                shutdown(connection.client, Int32(SHUT_RDWR))
                shutdown(connection.server, Int32(SHUT_RDWR))
            }
            state.held.removeAll()
            state.holdingUpstream = false
        }
    }

    /// While true, new connections are accepted and closed at once (the client sees its
    /// connection reset, as when the server is down).
    public func refuseConnections(_ refusing: Bool) { state.withLock { $0.refusing = refusing } }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let refusing = state.withLock { state -> Bool in
                state.accepted += 1
                return state.refusing
            }
            guard !refusing, let server = connectToTarget() else {
                close(client)
                continue
            }
            state.withLock { $0.connections.append((client, server)) }
            let pumps = Pumps()
            for (from, to, upstream) in [(client, server, true), (server, client, false)] {
                let thread = Thread { [self] in
                    pump(from: from, to: to, upstream: upstream)
                    // The last pump to end closes both descriptors: closing one still in use by
                    // the other pump could hand its number to an unrelated socket.
                    if pumps.running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                        state.withLock { state in
                            state.connections.removeAll { $0.client == client }
                            state.held.removeValue(forKey: client)
                            close(client)
                            close(server)
                        }
                    }
                }
                thread.start()
            }
        }
    }

    private func connectToTarget() -> Int32? {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard server >= 0 else { return nil }
        var address = Self.loopback(port: UInt16(targetPort))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(server)
            return nil
        }
        return server
    }

    /// Copies `from` to `to` until either side closes; upstream bytes are kept while holding.
    /// Shuts both sockets down when it ends, which ends the other pump too.
    private func pump(from: Int32, to: Int32, upstream: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            let chunk = Array(buffer[0..<count])
            let forward = state.withLock { state -> Bool in
                guard upstream, state.holdingUpstream else { return true }
                state.held[from, default: []] += chunk
                return false
            }
            if forward && !writeAll(chunk, to: to) { break }
        }
        shutdown(to, Int32(SHUT_RDWR))
        shutdown(from, Int32(SHUT_RDWR))
    }

    private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}

/// How many of a connection's two pumps still run.
private final class Pumps: Sendable {
    let running = Atomic<Int>(2)
}
