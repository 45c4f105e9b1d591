import AccessoryKit
import Configuration
import Telemetry

/// What ``MQTTGatewaySource`` does with one message, without the loop: the `gateways:`
/// entries' parsers, what each heard gateway gives (``GatewayTracker``) and the messages each
/// entry brought. Each message is parsed by its entry's parser, handed to a
/// ``SightingIntake`` (Ingest), and counted on the gateway that heard it.
struct GatewayTelemetry {
    /// The entries' parsers, in configuration order.
    let parsers: [TelemetryParser]
    /// The heard gateways, on the board every source of the configuration shares.
    let board: GatewayBoard
    var gateways: GatewayTracker { board.tracker }
    /// Messages taken from each entry (`aabridge_gateway_messages_total`, by format).
    private(set) var messages: [Int]

    /// What one message came to.
    struct Heard {
        /// What Ingest made of it (for the loop to apply).
        var outcome = IngestOutcome()
        /// `bridge/gateways` changed (a new gateway, one's state, a problem).
        var gatewaysChanged = false
        /// Problems that appeared on the gateway that heard it: each said once, as a warning.
        var appeared: [GatewayTracker.Appeared] = []
        /// A gateway's status changed: the line that says so.
        var notice: String?
    }

    init(configuration: BridgeConfiguration, board: GatewayBoard? = nil) {
        parsers = configuration.gateways.map { gateway in
            TelemetryParser(
                format: gateway.format,
                // The configuration loader has checked these filters; an invalid one would
                // fall back to the format's default.
                topic: TopicPattern(gateway.topic),
                statusTopic: gateway.statusTopic.flatMap { TopicPattern($0) },
                baseTopic: configuration.mqtt.baseTopic, name: gateway.name)
        }
        self.board = board ?? GatewayBoard(configuration: configuration)
        messages = Array(repeating: 0, count: configuration.gateways.count)
    }

    /// Each entry's status topic (said once: a will says `offline` once), then its telemetry;
    /// none for an entry heard otherwise than on MQTT (its own source hears it).
    var claims: [TopicClaim] {
        parsers.enumerated().flatMap { index, parser in
            guard parser.format.isMQTT else { return [TopicClaim]() }
            var claims: [TopicClaim] = []
            if let status = parser.statusTopic { claims.append(.oneOff(status.filter, tag: Self.tag(entry: index, status: true))) }
            claims.append(.telemetry(parser.topic.filter, tag: Self.tag(entry: index, status: false)))
            return claims
        }
    }

    /// A claim's tag: the entry's index and whether it is the status topic.
    static func tag(entry: Int, status: Bool) -> Int { entry * 2 + (status ? 1 : 0) }

    /// One message on the claim `tag` names (`retained`: the broker's retained copy).
    mutating func take(
        _ topic: String, _ payload: [UInt8], retained: Bool = false, tag: Int, at now: Timestamp, into intake: inout some SightingIntake
    ) -> Heard {
        let (entry, status) = (tag / 2, tag % 2 == 1)
        guard parsers.indices.contains(entry) else { return Heard() }
        messages[entry] += 1
        let parser = parsers[entry]
        // What a gateway hears is said once, now. A retained copy is what it heard whenever
        // someone published it so: replayed at every subscription, it would put an accessory in
        // ear after every restart. Gateway statuses and wills are retained by design.
        if retained && !status { return Heard(outcome: IngestOutcome(.refuse(Self.retainedRefusal(topic, gateway: parser.name)))) }
        // The router found the message on the entry's status topic or not: the parser does not look again.
        let parsed =
            status
            ? parser.parse(topic: topic, payload: payload, receivedAt: now.milliseconds)
            : parser.parseTelemetry(topic: topic, payload: payload, receivedAt: now.milliseconds)
        var heard = Heard()
        switch parsed {
        case .advertisement(let advertisement):
            heard.outcome = intake.advertisement(advertisement, at: now)
            let counted = board.tracker.advertisement(
                advertisement.gateway, through: entry, withManufacturerData: !advertisement.manufacturerData.isEmpty,
                attributed: heard.outcome.attributed, lookalikeFloodUntil: heard.outcome.lookalikeFloodUntil, at: now,
                area: advertisement.gatewayArea)
            heard.gatewaysChanged = counted.changed || board.tracker.problemsChanged
            heard.appeared = counted.appeared
        case .report(let report):
            if let gateway = report.gateway { heard.gatewaysChanged = board.tracker.seen(gateway, through: entry, at: now) }
            heard.outcome = intake.report(report, from: parser.name)
        case .gatewayStatus(let status):
            if board.tracker.status(status.gateway, through: entry, online: status.state == .online, at: now) {
                heard.gatewaysChanged = true
                heard.notice = "gateway \(status.gateway) is \(status.state.rawValue)"
            }
            // A relay's scanner going offline is a problem, and its heartbeat ends silence.
            heard.appeared = board.tracker.evaluate(status.gateway, through: entry, at: now)
            heard.gatewaysChanged = heard.gatewaysChanged || board.tracker.problemsChanged
        case .trackerOffline, .ignored:
            break
        case .rejected(let rejection):
            heard.outcome = intake.refused(rejection, from: parser.name)
        }
        return heard
    }

    static func retainedRefusal(_ topic: String, gateway: String) -> TelemetryRefusal {
        let topic = KeyedTopic.redacted(topic)
        return TelemetryRefusal(
            gateway: gateway, reason: .retained,
            message: "ignored retained telemetry on \(topic): gateways publish what they hear without retain "
                + "(clear it with: mosquitto_pub -r -n -t '\(topic)')")
    }

    /// `bridge/gateways` went out.
    mutating func published() { board.tracker.published() }

    /// The Apple accessories without an IRK changed: the ESPresense gateways' problems follow.
    mutating func needIRK(_ names: [String]) -> [GatewayTracker.Appeared] { board.tracker.needIRK(names, at: nil) }

    /// Every heard gateway's problems at `now` (a quiet gateway's minute runs out).
    mutating func evaluate(at now: Timestamp) -> [GatewayTracker.Appeared] { board.tracker.evaluateAll(at: now) }
}
