import AccessoryKit
import HTTPServer
import JSON

/// The HTTP server's calls, handled by the loop like any other event (issue 15): requests take
/// the same path as `bridge/request/<name>`, and the console's streams mirror what is published.
extension BridgeRuntime {
    /// Starts the server when `http.listen` is set. A port that cannot be bound is logged,
    /// and the bridge runs without its console (MQTT is what it is for).
    func startHTTP() {
        guard let listen = configuration.http.listen else { return }
        do {
            let console = try HTTPConsole(configuration: configuration.http, listen: listen, baseTopic: topics.base, sink: eventSink)
            http = console
            publisher.mirror = { [unowned console] topic, payload in console.mirror(topic, payload) }
            logger.info("HTTP: console, /metrics and /healthz on http://\(listen)/")
        } catch {
            logger.error("HTTP: \(error); running without the console, /metrics and /healthz")
        }
    }

    /// Stops the server (bounded: waiting connections give up within 100 ms).
    func stopHTTP() {
        publisher.mirror = nil
        http?.stop()
        http = nil
    }

    func handle(_ call: HTTPCall) async {
        switch call.kind {
        case .health:
            call.reply.answer(healthCheck())
        case .metrics:
            call.reply.answer(.full(status: 200, contentType: MetricsText.contentType, body: Array(metricsText().utf8), headers: []))
        case .subscribe(let stream):
            guard let http else { return call.reply.answer(.text(503, "stopping\n")) }
            http.subscribe(stream, snapshot: consoleSnapshot())
            call.reply.answer(.events(stream))
        case .request(let name, let body):
            http?.pendingReply = call.reply
            await handle(Ingest.request(name: name, payload: body), at: clock())
            syncPairingForm()
            // Every request is answered through respond(); a caller is never left waiting.
            if let unanswered = http?.pendingReply {
                http?.pendingReply = nil
                unanswered.answer(.text(500, "no response\n"))
            }
        }
    }

    /// Gives the response to the HTTP caller when the request came over HTTP.
    /// - Returns: whether it did (then `bridge/response/<name>` is not published).
    /// `status` replaces the one the result gives (421 for a request another instance of the
    /// cluster answers); in a cluster the body carries the instance and epoch, as on MQTT.
    func answerOverHTTP(
        _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?, accessory: BluetoothAddress? = nil, status: Int? = nil
    ) -> Bool {
        guard let reply = http?.pendingReply else { return false }
        http?.pendingReply = nil
        let code: Int
        switch result {
        case .success: code = 200
        case .failure(let error) where error.code == "invalidRequest": code = 400
        case .failure(let error) where error.code == "unknown": code = 500
        // The request was understood but the bridge's state refuses it (not a candidate, not capable, ...).
        case .failure: code = 409
        }
        let body = publisher.stamped(publisher.payloads.response(result, transaction: transaction), for: accessory)
        reply.answer(.full(status: status ?? code, contentType: "application/json", body: body.bytes, headers: []))
        return true
    }

    /// `/healthz`: 200 `ok`, or 503 with the one reason the bridge is not doing its job.
    func healthCheck() -> HTTPResponse {
        if !connection.isConnected { return .text(503, "not connected to the MQTT broker\n") }
        if core.storage.lastCommitFailed { return .text(503, "storage: the last commit failed\n") }
        return .text(200, "ok\n")
    }

    /// What a console stream gets first: the retained topics' current state.
    func consoleSnapshot() -> [(topic: String, payload: [UInt8])] {
        let now = clock()
        let engine = core.engine
        let state: JSONValue = ["state": .string(connection.isConnected ? "online" : "offline")]
        return [
            ("bridge/state", state.bytes),
            ("bridge/info", publisher.info.payload(engine: engine, registered: Publisher.registeredCount(engine)).bytes),
            ("bridge/health", publisher.health(at: now, engine: engine).bytes),
            ("bridge/gateways", ingest.gateways.payload.bytes),
            ("bridge/picker", publisher.payloads.picker(engine.picker).bytes),
            ("bridge/accessories", publisher.accessoryList()),
        ]
    }

    /// `/metrics` (docs/operations.md lists every family).
    func metricsText() -> String {
        let statistics = connection.statistics
        let counters = diagnostics.counters
        let engine = core.engine
        var text = MetricsText()
        text.family("aabridge_build_info", "gauge", "The running version (always 1).")
        text.sample("aabridge_build_info", [("version", BridgeModule.version)], 1)
        text.gauge("process_resident_memory_bytes", "Resident memory in bytes.", ResidentMemory.bytes())
        text.gauge(
            "aabridge_uptime_seconds", "Seconds since the bridge started.", Int(clock().milliseconds(since: publisher.startedAt) / 1000))
        text.gauge("aabridge_mqtt_connected", "1 while connected to the MQTT broker.", connection.isConnected ? 1 : 0)
        text.counter("aabridge_mqtt_messages_received_total", "MQTT messages received.", statistics.messagesIn)
        text.counter("aabridge_mqtt_messages_sent_total", "MQTT messages published.", statistics.messagesOut)
        text.counter("aabridge_mqtt_reconnects_total", "Reconnections to the MQTT broker.", statistics.reconnects)
        var byFormat: [String: Int] = [:]
        for gateway in configuration.gateways { byFormat[gateway.format.rawValue] = 0 }
        for (index, count) in counters.gatewayMessages.enumerated() where index < configuration.gateways.count {
            byFormat[configuration.gateways[index].format.rawValue, default: 0] += count
        }
        text.counter(
            "aabridge_gateway_messages_total", "Messages taken from gateway topics, by the gateway's format.", label: "format", byFormat)
        var rejected = counters.rejectedByReason
        // What no parser saw: dropped by the backlog, the congestion bound or the client's bound.
        let overload = counters.telemetryRejected - rejected.values.reduce(0, +) + statistics.messagesDropped
        rejected["overload"] = max(0, overload)
        text.counter("aabridge_telemetry_rejected_total", "Gateway telemetry rejected or dropped, by reason.", label: "reason", rejected)
        text.counter("aabridge_decisions_total", "Routing decisions made.", counters.decisions)
        text.counter(
            "aabridge_errors_total", "Errors (request errors, accessory errors, storage failures), by code.", label: "code",
            counters.errorsByCode)
        text.counter("aabridge_storage_failures_total", "Commits that failed.", counters.storageFailures)
        text.family("aabridge_requests_total", "counter", "Requests answered, by name, status (ok, error) and transport (mqtt, http).")
        for (key, count) in counters.requests.sorted(by: { $0.key < $1.key }) {
            text.sample("aabridge_requests_total", [("name", key.name), ("status", key.status), ("via", key.via)], count)
        }
        text.histogram(
            "aabridge_storage_commit_duration_seconds", "Time of one storage commit (a transaction).", core.storage.commitLatency)
        text.histogram(
            "aabridge_decision_duration_seconds", "Engine and storage time of a telemetry message that led to a routing decision.",
            diagnostics.decisionLatency)
        text.gauge("aabridge_accessories", "Accessories paired.", engine.accessories.count)
        text.gauge("aabridge_accessories_registered", "Accessories registered (AccessoryControlDevice).", Publisher.registeredCount(engine))
        text.gauge("aabridge_accessories_available", "Accessories heard recently (available).", engine.statuses.count { $0.available })
        text.gauge("aabridge_gateways_online", "Gateways heard and online.", ingest.gateways.onlineCount)
        text.gauge("aabridge_console_streams", "Open console event streams.", http?.streams.count ?? 0)
        if let cluster {
            let ownership = cluster.ownership
            text.gauge("aabridge_cluster_partitions_held", "Partitions this instance holds (cluster mode).", ownership.held.count)
            text.gauge("aabridge_cluster_members", "Live instances of the cluster, this one included.", cluster.members.count)
            text.gauge(
                "aabridge_cluster_accessories_owned", "Accessories in the partitions this instance holds.",
                engine.accessories.count { ownership.owns($0.id) })
        }
        return text.text
    }
}
