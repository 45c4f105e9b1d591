import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Telemetry

/// The first source of sightings: the gateways that publish what they hear on MQTT
/// (OpenMQTTGateway, Theengs, ESPresense, Tasmota, firmware relays), one claim per
/// `gateways:` entry's topic and status topic.
///
/// A source turns what it hears into sightings and reports for ``Ingest`` (through its
/// context, which applies them through the output step), and keeps its own gateways: the
/// figures and problems of each heard gateway (``GatewayTracker``) on `bridge/gateways`, a
/// sensor for each in Home Assistant, its families in `/metrics`. Another source (the box's
/// adapter, Home Assistant's scanners) is another component of the same shape.
final class MQTTGatewaySource: RuntimeComponent {
    private var telemetry: GatewayTelemetry
    /// The products decoded as Apple proximity pairing: their accessories without an IRK are
    /// what an ESPresense node cannot report (``GatewayProblem/espresenseNeedsIRK``).
    private let appleProducts: Set<String>
    /// How often every heard gateway's minute is evaluated and `bridge/gateways` republished
    /// (a gateway gone quiet loses its problems too): the health interval.
    private let evaluationMilliseconds: Int64
    private var evaluatedAt: Timestamp?
    /// Home Assistant's bridge device (a sensor per heard gateway) goes out again for new
    /// gateways at most once per this: a flood of invented node names must not republish a
    /// growing device config for each (it went out 257 times for 10,000 names).
    static let discoveryDebounceMilliseconds: Int64 = 10_000
    private var discoveredAt: Timestamp?
    /// The heard gateways changed since Home Assistant was last told.
    private var discoveryPending = false

    /// - Parameter board: the heard gateways every source of the configuration counts on.
    init(configuration: BridgeConfiguration, board: GatewayBoard) {
        telemetry = GatewayTelemetry(configuration: configuration, board: board)
        appleProducts = Set(configuration.products.filter { $0.placementDecoder == .appleProximity }.map(\.name))
        evaluationMilliseconds = Int64(configuration.health.intervalSeconds) * 1000
    }

    var claims: [TopicClaim] { telemetry.claims }

    private var gateways: GatewayTracker { telemetry.gateways }

    func start(_ context: ComponentContext) async {
        evaluatedAt = context.now()
        needIRK(context)
    }

    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async {
        var intake = context
        let heard = telemetry.take(message.topic, message.payload, retained: message.retain, tag: tag, at: now, into: &intake)
        // Nobody's advertisement comes to nothing to apply: no suspension point for it.
        if !heard.outcome.isEmpty { await context.apply(heard.outcome, at: now) }
        if let notice = heard.notice { context.logger.info(notice) }
        warn(heard.appeared, context)
        if heard.gatewaysChanged { publishGateways(at: now, context) }
    }

    /// An accessory added, removed, or given keys changes what an ESPresense node needs.
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {
        let changed = outputs.contains { output in
            switch output {
            case .accessoryRemoved, .keysChanged: true
            case .event(let event): event.type == .accessoryAdded || event.type == .accessoryChanged
            default: false
            }
        }
        if changed { needIRK(context) }
        if gateways.problemsChanged { publishGateways(at: now, context) }
    }

    func nextDue(at now: Timestamp) -> Timestamp? {
        let evaluation = evaluatedAt.map { Timestamp(milliseconds: $0.milliseconds + evaluationMilliseconds) }
        guard discoveryPending, let discoveredAt else { return evaluation }
        let discovery = Timestamp(milliseconds: discoveredAt.milliseconds + Self.discoveryDebounceMilliseconds)
        return evaluation.map { min($0, discovery) } ?? discovery
    }

    /// The figures are of the last minute: a gateway gone quiet loses its problems too.
    func wake(at now: Timestamp, _ context: ComponentContext) {
        discoverWhenDue(at: now, context)
        guard let evaluatedAt, now.milliseconds(since: evaluatedAt) >= evaluationMilliseconds else { return }
        self.evaluatedAt = now
        warn(telemetry.evaluate(at: now), context)
        publishGateways(at: now, context)
    }

    func republish(at now: Timestamp, _ context: ComponentContext) {
        context.publishBridge(context.topics.bridgeGateways, gateways.payload(at: now))
        telemetry.published()
        if discoveryPending { discover(at: now, context) }
    }

    func snapshot(at now: Timestamp, _ context: ComponentContext) -> [(topic: String, payload: [UInt8])] {
        [("bridge/gateways", gateways.payload(at: now).bytes)]
    }

    /// `bridge/gateways`, and Home Assistant's per-gateway sensors when the heard gateways
    /// changed (at most once per ``discoveryDebounceMilliseconds``).
    private func publishGateways(at now: Timestamp, _ context: ComponentContext) {
        context.publishBridge(context.topics.bridgeGateways, gateways.payload(at: now))
        telemetry.published()
        discoveryPending = true
        discoverWhenDue(at: now, context)
    }

    private func discoverWhenDue(at now: Timestamp, _ context: ComponentContext) {
        guard discoveryPending else { return }
        if let discoveredAt, now.milliseconds(since: discoveredAt) < Self.discoveryDebounceMilliseconds { return }
        discover(at: now, context)
    }

    private func discover(at now: Timestamp, _ context: ComponentContext) {
        discoveryPending = false
        discoveredAt = now
        context.discover(gateways: gateways.heardGateways.map { HomeAssistantGateway(entry: $0.entry, name: $0.name) })
    }

    /// Each problem that appeared, once, as a warning (it stays on `bridge/gateways` until it goes).
    private func warn(_ appeared: [GatewayTracker.Appeared], _ context: ComponentContext) {
        for problem in appeared { context.logger.warning("gateway \(problem.gateway): \(problem.message)") }
    }

    /// The Apple accessories without an IRK, by name (at most five), for the ESPresense nodes' problem.
    private func needIRK(_ context: ComponentContext) {
        let engine = context.engine.engine
        let names = engine.session.accessories.values.sorted { $0.id < $1.id }.filter { accessory in
            appleProducts.contains(accessory.product) && engine.keys[accessory.id]?.irk == nil
        }.prefix(5).map(\.displayName)
        warn(telemetry.needIRK(names), context)
    }

    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {
        var byFormat: [String: Int] = [:]
        for (index, entry) in gateways.configured.enumerated() { byFormat[entry.format.rawValue, default: 0] += telemetry.messages[index] }
        text.counter(
            "aabridge_gateway_messages_total", "Messages taken from gateway topics, by the gateway's format.", label: "format", byFormat)
        text.gauge("aabridge_gateways_online", "Gateways heard and online.", gateways.onlineCount)
        // Per configured gateway entry, never per heard node: the labels stay as few as the
        // configuration's entries, however many node names a gateway sends.
        let tracked = gateways.configured
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
            gateways.namesLeftOut)
        text.family("aabridge_gateway_problems", "gauge", "Heard gateways with a problem, by configured gateway entry and problem code.")
        for (index, entry) in tracked.enumerated() {
            for problem in GatewayProblem.allCases {
                text.sample(
                    "aabridge_gateway_problems", [("gateway", entry.name), ("code", problem.rawValue)],
                    gateways.problemCount(problem, entry: index))
            }
        }
    }
}
