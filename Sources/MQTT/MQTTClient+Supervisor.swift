import CMosquitto
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MQTTClient {
    /// Starts the network thread. It holds the client strongly until it stops, which is what
    /// keeps the unretained user-data pointer in the callbacks valid.
    func startSupervisor() {
        // A POSIX thread, as Foundation's `Thread` would be: this module imports only
        // FoundationEssentials, which has none. The thread releases the retain when it ends.
        let client = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<MQTTClient>.fromOpaque(context!).takeRetainedValue().superviseConnection()
                return nil
            }, client)
        precondition(started == 0, "cannot start the MQTT network thread: \(String(cString: strerror(started)))")
        // Linux keeps 15 bytes of a thread's name.
        _ = Self.setThreadName?(thread, String("mqtt-\(configuration.clientID)".utf8.prefix(15))!)
        pthread_detach(thread)
    }

    /// glibc's `pthread_setname_np` (a GNU extension the Glibc module does not export), looked
    /// up by name; nil elsewhere.
    private static let setThreadName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = dlsym(
        nil, "pthread_setname_np"
    ).map { unsafeBitCast($0, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self) }

    /// One CONNECT, with the Maximum Packet Size and Session Expiry Interval properties on MQTT 5.
    private func connect(_ mosq: OpaquePointer) -> Int32 {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if configuration.protocolVersion == .v5, let size = configuration.maximumPacketSize {
            let rc = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(clamping: size))
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return rc }
        }
        if configuration.protocolVersion == .v5, !configuration.cleanSession, configuration.sessionExpiryInterval > 0 {
            let rc = mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), configuration.sessionExpiryInterval)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return rc }
        }
        return mosquitto_connect_bind_v5(
            mosq, configuration.host, Int32(configuration.port), Int32(configuration.keepalive), nil, properties)
    }

    /// Connect, pump the loop until the connection fails, back off, repeat, until the owner
    /// disconnects. Runs on the network thread only.
    private func superviseConnection() {
        let mosq = handle.pointer
        var failedAttempts = 0
        var generator = SystemRandomNumberGenerator()
        while !isStopping {
            state.withLock { $0.refusal = nil }
            var rc = connect(mosq)
            var failure: MQTTError?
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                repeat {
                    acknowledgeQuickly(mosq)
                    rc = readWhatIsAtHand(mosq)
                    if rc == MOSQ_ERR_SUCCESS.rawValue { advanceConnection() }
                } while rc == MOSQ_ERR_SUCCESS.rawValue && !isStopping
                if isStopping {
                    // Let the DISCONNECT queued by disconnect() reach the socket.
                    var flushes = 0
                    while mosquitto_loop(mosq, 100, 1) == MOSQ_ERR_SUCCESS.rawValue && flushes < 20 { flushes += 1 }
                    incoming.wakeConsumer()
                    break
                }
                failure =
                    state.withLock { $0.refusal }
                    ?? MQTTError(library: rc, context: "connection to \(configuration.host):\(configuration.port) lost")
            } else {
                failure = MQTTError(library: rc, context: "cannot connect to \(configuration.host):\(configuration.port)")
            }
            let reason = failure ?? MQTTError(library: rc)
            let (wasConnected, firstConnect) = state.withLock { state in
                let wasConnected = state.link == .ready
                state.dropLink()
                state.statistics.failedAttempts += wasConnected ? 0 : 1
                let firstConnect = state.firstConnect
                state.firstConnect = nil
                return (wasConnected, firstConnect)
            }
            if wasConnected { failedAttempts = 0 }
            stateContinuation.yield(.disconnected(reason))
            if let firstConnect {
                // The caller of connect() wants the first attempt's verdict and no supervisor.
                state.withLock { $0.phase = .stopping }
                firstConnect.resume(returning: .failure(reason))
                break
            }
            let delay = configuration.reconnect.delay(attempt: failedAttempts, random: Double.random(in: 0..<1, using: &generator))
            failedAttempts += 1
            let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
            _ = wakeUp.wait(timeout: .now() + DispatchTimeInterval.milliseconds(milliseconds))
        }
        finishSupervisor()
    }

    /// Asks the kernel to acknowledge what arrives next at once (Linux's quick-ack mode
    /// lapses, so this is renewed before every wait for data). Brokers leave Nagle's algorithm
    /// on by default (mosquitto's `set_tcp_nodelay false`), so with a delayed ACK here a small
    /// message to this client waits behind the previous one's ACK (figures in
    /// docs/performance.md, "MQTT client notes"; renewing it at most once a millisecond
    /// instead brought that 40 ms wait back at 5,000 messages a second).
    private func acknowledgeQuickly(_ mosq: OpaquePointer) {
        let fd = mosquitto_socket(mosq)
        guard fd >= 0 else { return }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// One turn of the loop (waiting up to a second for something to read), then more turns
    /// without waiting while each brings a message, at most ``readBurst``; the consumer is woken
    /// once, after them. libmosquitto reads one packet per turn, so in a flood this wakes the
    /// consumer once per burst instead of once per message, the cost that made the difference
    /// to a plain C subscriber (docs/performance.md, "Ingest against mosquitto_sub").
    private func readWhatIsAtHand(_ mosq: OpaquePointer) -> Int32 {
        defer { incoming.wakeConsumer() }
        var received = messagesInCount.load(ordering: .relaxed)
        var rc = mosquitto_loop(mosq, 1000, 1)
        var turns = 1
        while rc == MOSQ_ERR_SUCCESS.rawValue, turns < Self.readBurst {
            let now = messagesInCount.load(ordering: .relaxed)
            guard now != received else { break }
            received = now
            rc = mosquitto_loop(mosq, 0, 1)
            turns += 1
        }
        return rc
    }

    /// Turns of the loop read before the consumer is woken (a message waits at most this many
    /// packets' reading for it).
    static let readBurst = 64

    /// Moves an accepted connection on, after each burst of loop turns (so after libmosquitto
    /// has finished with the packets it read, its re-sends on a CONNACK included):
    /// - CONNACK accepted → restoring: every subscription is sent again;
    /// - every SUBACK granted → ready: the outbox goes out (after the re-sends, in order),
    ///   ``connectionStates`` says `.connected`, `connect()` returns;
    /// - a restored subscription refused → the socket is shut, so the loop fails with that
    ///   reason and the supervisor reconnects with backoff (the will says `offline`);
    /// - ready → the outbox drains as acknowledgements free message ids.
    private func advanceConnection() {
        let step = state.withLock { state -> ConnectionStep in
            if state.connackAccepted {
                state.connackAccepted = false
                state.link = .restoring
            }
            guard state.link != .down else { return .none }
            if state.refusal != nil { return .giveUp }
            // Cheap when nothing changed: every turn of the loop comes here.
            if state.sentFilters.count != state.subscriptions.count { sendSubscriptions(&state) }
            if state.link == .restoring {
                guard state.pendingSubscribes.isEmpty, state.sentFilters.count == state.subscriptions.count else { return .none }
                state.link = .ready
                defer { state.firstConnect = nil }
                return .ready(state.firstConnect)
            }
            return state.outbox.isEmpty ? .none : .sendKept
        }
        switch step {
        case .none:
            return
        case .giveUp:
            let fd = mosquitto_socket(handle.pointer)
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        case .sendKept:
            sendKept()
        case .ready(let firstConnect):
            sendKept()
            stateContinuation.yield(.connected)
            firstConnect?.resume(returning: .success(()))
        }
    }

    /// What ``advanceConnection()`` found to do outside the lock.
    private enum ConnectionStep {
        case none, giveUp, sendKept
        case ready(CheckedContinuation<Result<Void, MQTTError>, Never>?)
    }

    private var isStopping: Bool {
        state.withLock { $0.phase == .stopping || $0.phase == .stopped }
    }

    private func finishSupervisor() {
        let waiters = state.withLock { state in
            state.phase = .stopped
            state.dropLink()
            defer { state.stopWaiters.removeAll() }
            return state.stopWaiters
        }
        waiters.forEach { $0.resume() }
    }
}

extension MQTTClient {
    /// Tears the TCP connection down without a DISCONNECT, as a crash or a pulled cable
    /// would, so tests can watch the will being published and the supervisor reconnecting.
    func breakConnectionForTesting() {
        let fd = mosquitto_socket(handle.pointer)
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
