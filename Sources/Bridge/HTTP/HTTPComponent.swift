import AccessoryKit
import Configuration
import HTTPServer
import JSON

/// The HTTP side (the console, `/metrics`, `/healthz`), as a component: the server and
/// the console's event streams (``HTTPConsole``). Its calls are handled by the loop like any
/// other event: requests take the same path as `bridge/request/<name>`, answered to the
/// caller, and the console's streams mirror what is published.
final class HTTPComponent: RuntimeComponent {
    private let listen: HTTPConfiguration.Listen
    /// The server, while it runs (nil when the port could not be bound, and after shutdown).
    private var console: HTTPConsole?

    init(listen: HTTPConfiguration.Listen) { self.listen = listen }

    /// Starts the server. A port that cannot be bound is logged, and the bridge runs without
    /// its console (MQTT is what it is for).
    func start(_ runtime: BridgeRuntime) {
        do {
            let console = try HTTPConsole(
                configuration: runtime.configuration.http, listen: listen, baseTopic: runtime.topics.base, sink: runtime.eventSink)
            self.console = console
            runtime.publisher.mirror = { [unowned console] topic, payload in console.mirror(topic, payload) }
            runtime.logger.info("HTTP: console, /metrics and /healthz on http://\(listen)/")
        } catch {
            runtime.logger.error("HTTP: \(error); running without the console, /metrics and /healthz")
        }
    }

    /// Stops the server (bounded: waiting connections give up within 100 ms).
    func shutdownBegins(_ runtime: BridgeRuntime) {
        runtime.publisher.mirror = nil
        console?.stop()
        console = nil
    }

    func handle(_ event: RuntimeEvent, _ runtime: BridgeRuntime) async {
        guard case .http(let call) = event else { return }
        switch call.kind {
        case .health:
            call.reply.answer(healthCheck(runtime))
        case .metrics:
            call.reply.answer(.full(status: 200, contentType: MetricsText.contentType, body: Array(metricsText(runtime).utf8), headers: []))
        case .subscribe(let stream):
            guard let console else { return call.reply.answer(.text(503, "stopping\n")) }
            console.subscribe(stream, snapshot: snapshot(runtime))
            call.reply.answer(.events(stream))
        case .request(let name, let body):
            await runtime.handle(Ingest.request(name: name, payload: body), answer: .http(call.reply), at: runtime.clock())
        }
    }

    /// `/healthz`: 200 `ok`, or 503 with the one reason the bridge is not doing its job.
    private func healthCheck(_ runtime: BridgeRuntime) -> HTTPResponse {
        if !runtime.connection.isConnected { return .text(503, "not connected to the MQTT broker\n") }
        if runtime.core.storage.lastCommitFailed { return .text(503, "storage: the last commit failed\n") }
        return .text(200, "ok\n")
    }

    /// What a console stream gets first: the retained topics' current state.
    private func snapshot(_ runtime: BridgeRuntime) -> [(topic: String, payload: [UInt8])] {
        let publisher = runtime.publisher
        let state: JSONValue = ["state": .string(runtime.connection.isConnected ? "online" : "offline")]
        return [
            ("bridge/state", state.bytes),
            ("bridge/info", publisher.infoPayload().bytes),
            ("bridge/health", publisher.health(at: runtime.clock()).bytes),
            ("bridge/gateways", runtime.ingest.gatewaysPayload(at: runtime.clock()).bytes),
            ("bridge/picker", publisher.payloads.picker(runtime.engine.picker).bytes),
            ("bridge/accessories", publisher.accessoryList()),
        ]
    }

    /// Open console event streams.
    func metrics(_ text: inout MetricsText, _ runtime: BridgeRuntime) {
        text.gauge("aabridge_console_streams", "Open console event streams.", console?.streams.count ?? 0)
    }

    /// `/metrics` (docs/operations.md lists every family): the bridge's, then each component's.
    private func metricsText(_ runtime: BridgeRuntime) -> String {
        let statistics = runtime.connection.statistics
        let counters = runtime.diagnostics.counters
        let gateways = runtime.configuration.gateways
        let engine = runtime.engine.engine
        var text = MetricsText()
        text.family("aabridge_build_info", "gauge", "The running version (always 1).")
        text.sample("aabridge_build_info", [("version", BridgeModule.version)], 1)
        text.gauge("process_resident_memory_bytes", "Resident memory in bytes.", ResidentMemory.bytes())
        text.gauge(
            "aabridge_uptime_seconds", "Seconds since the bridge started.",
            Int(runtime.clock().milliseconds(since: runtime.publisher.startedAt) / 1000))
        text.gauge("aabridge_mqtt_connected", "1 while connected to the MQTT broker.", runtime.connection.isConnected ? 1 : 0)
        text.counter("aabridge_mqtt_messages_received_total", "MQTT messages received.", statistics.messagesIn)
        text.counter("aabridge_mqtt_messages_sent_total", "MQTT messages published.", statistics.messagesOut)
        text.counter("aabridge_mqtt_reconnects_total", "Reconnections to the MQTT broker.", statistics.reconnects)
        var byFormat: [String: Int] = [:]
        for gateway in gateways { byFormat[gateway.format.rawValue] = 0 }
        for (index, count) in counters.gatewayMessages.enumerated() where index < gateways.count {
            byFormat[gateways[index].format.rawValue, default: 0] += count
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
            "aabridge_storage_commit_duration_seconds", "Time of one storage commit (a transaction).", runtime.core.storage.commitLatency)
        text.histogram(
            "aabridge_decision_duration_seconds", "Engine and storage time of a telemetry message that led to a routing decision.",
            runtime.diagnostics.decisionLatency)
        text.gauge("aabridge_accessories", "Accessories paired.", engine.accessories.count)
        text.gauge("aabridge_accessories_registered", "Accessories registered (AccessoryControlDevice).", Publisher.registeredCount(engine))
        text.gauge("aabridge_accessories_available", "Accessories heard recently (available).", engine.statuses.count { $0.available })
        text.gauge("aabridge_gateways_online", "Gateways heard and online.", runtime.ingest.gateways.onlineCount)
        // Per configured gateway entry, never per heard node: the labels stay as few as the
        // configuration's entries, however many node names a gateway sends.
        let tracked = runtime.ingest.gateways.configured
        let entries = tracked.map(\.name)
        func byEntry(_ value: (GatewayTracker.Configured) -> Int) -> [String: Int] {
            Dictionary(zip(entries, tracked.map(value)), uniquingKeysWith: +)
        }
        text.counter(
            "aabridge_gateway_advertisements_total", "Advertisements heard, by configured gateway entry.", label: "gateway",
            byEntry(\.totals.advertisements))
        text.counter(
            "aabridge_gateway_advertisements_with_manufacturer_data_total",
            "Advertisements that carried manufacturer data, by configured gateway entry.", label: "gateway",
            byEntry(\.totals.withManufacturerData))
        text.counter(
            "aabridge_gateway_advertisements_attributed_total", "Advertisements counted for an accessory, by configured gateway entry.",
            label: "gateway", byEntry(\.totals.attributed))
        text.counter(
            "aabridge_gateway_names_left_out_total", "Messages from gateway names beyond the 256 listed (not added to bridge/gateways).",
            runtime.ingest.gateways.namesLeftOut)
        text.family("aabridge_gateway_problems", "gauge", "Heard gateways with a problem, by configured gateway entry and problem code.")
        for (index, entry) in tracked.enumerated() {
            for problem in GatewayProblem.allCases {
                text.sample(
                    "aabridge_gateway_problems", [("gateway", entry.name), ("code", problem.rawValue)],
                    runtime.ingest.gateways.problemCount(problem, entry: index))
            }
        }
        for component in runtime.components { component.metrics(&text, runtime) }
        return text.text
    }
}
