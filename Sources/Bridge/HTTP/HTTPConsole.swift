import Configuration
import HTTPServer
import JSON

/// The runtime's side of the HTTP server, used from the loop only (``HTTPComponent``): the
/// server and the console's event streams.
final class HTTPConsole {
    let server: HTTPServer
    let frontDoor: HTTPFrontDoor
    /// The console's open event streams (a closed one is dropped at the next send).
    private(set) var streams: [EventStream] = []
    /// `<base>/`: streams carry topics relative to it.
    private let basePrefix: String

    /// Topics the console does not need: responses go to whoever asked.
    private static let unmirrored = ["bridge/response/", "bridge/last_response"]

    init(configuration: HTTPConfiguration, listen: HTTPConfiguration.Listen, baseTopic: String, mailbox: ComponentMailbox) throws {
        let hostRule = HostRule(listen: listen, allowedHosts: configuration.allowedHosts, allowedClients: configuration.allowedClients)
        let frontDoor = HTTPFrontDoor(token: configuration.token, hostRule: hostRule, mailbox: mailbox)
        self.frontDoor = frontDoor
        basePrefix = baseTopic + "/"
        var policy: HTTPServer.ClientPolicy?
        if !configuration.allowedClients.isEmpty { policy = { @Sendable address in configuration.admitsClient(address) } }
        server = try HTTPServer(
            host: listen.host, port: listen.port, connectionLimit: configuration.connectionLimit,
            perClientLimit: configuration.connectionsPerClient, headerTimeoutSeconds: configuration.headerTimeoutSeconds,
            timeoutSeconds: configuration.timeoutSeconds, maximumBodyBytes: HTTPFrontDoor.maximumBodyBytes, clientPolicy: policy
        ) { request in frontDoor.handle(request) }
    }

    /// Stops the server: waiting connections give up, streams close, the daemon's threads end.
    func stop() {
        frontDoor.stopping.store(true, ordering: .relaxed)
        for stream in streams { stream.close() }
        streams = []
        server.stop()
    }

    /// A new console stream: the current state first (as a subscriber of the retained
    /// topics would get it), then every publication.
    func subscribe(_ stream: EventStream, snapshot: [(topic: String, payload: [UInt8])]) {
        for (topic, payload) in snapshot { send(topic: topic, payload: payload, to: stream) }
        streams.append(stream)
    }

    /// One MQTT publication of the bridge, mirrored to the console's streams.
    func mirror(_ topic: String, _ payload: [UInt8]) {
        guard !streams.isEmpty, topic.hasPrefix(basePrefix) else { return }
        let relative = String(topic.dropFirst(basePrefix.count))
        if Self.unmirrored.contains(where: { relative.hasPrefix($0) }) { return }
        var open: [EventStream] = []
        for stream in streams where send(topic: relative, payload: payload, to: stream) { open.append(stream) }
        streams = open
    }

    /// `event: mqtt` with `{"topic":T,"payload":P}`, P the published JSON (null for a cleared topic).
    @discardableResult
    private func send(topic: String, payload: [UInt8], to stream: EventStream) -> Bool {
        var data = Array(#"{"topic":"#.utf8)
        data.append(contentsOf: JSONValue.string(topic).bytes)
        data.append(contentsOf: Array(#","payload":"#.utf8))
        data.append(contentsOf: payload.isEmpty ? Array("null".utf8) : payload)
        data.append(UInt8(ascii: "}"))
        return stream.send(event: "mqtt", data: data)
    }
}
