import AccessoryKit
import Configuration
import JSON
import MQTT
import Telemetry

@testable import Bridge

/// The stages that decide what a message is, without the loop: ``Ingest`` behind the MQTT
/// gateway source's parsing (``GatewayTelemetry``), with the runtime's router and claims.
/// A message is routed as the runtime routes it: a request or `/set` to Ingest, a gateway's
/// topic through the source first.
struct IngestFeed {
    var ingest: Ingest
    var telemetry: GatewayTelemetry
    let router: TopicRouter
    /// The components the runtime would make, for what their claims route.
    private let components: [any RuntimeComponent]

    init(configuration: BridgeConfiguration, engine: EngineView) {
        ingest = Ingest(configuration: configuration, engine: engine)
        telemetry = GatewayTelemetry(configuration: configuration)
        components = RuntimeComponents.make(for: configuration, ownership: .solo(), lookalikes: ingest.lookalikes)
        router = TopicRouter(topics: Topics(base: configuration.mqtt.baseTopic), claims: components.map(\.claims))
    }

    /// The component a route names (nil: none claimed it).
    func claimant(of route: IngestRoute) -> (any RuntimeComponent)? {
        guard case .claimed(let claimed) = route else { return nil }
        return components[claimed.component]
    }

    /// The route of a gateway entry's telemetry (or status) topic.
    func gatewayRoute(index: Int, status: Bool = false) -> IngestRoute? {
        guard let source = components.firstIndex(where: { $0 is MQTTGatewaySource }),
            let claim = components[source].claims.first(where: { $0.tag == GatewayTelemetry.tag(entry: index, status: status) })
        else { return nil }
        return .claimed(ClaimedTopic(component: source, tag: claim.tag, oneOff: claim.oneOff, sheddable: claim.sheddable))
    }

    mutating func ingest(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) -> FedOutcome {
        if case .claimed(let claimed) = route, claimant(of: route) is MQTTGatewaySource {
            let heard = telemetry.take(message.topic, message.payload, retained: message.retain, tag: claimed.tag, at: now, into: &ingest)
            return FedOutcome(outcome: heard.outcome, gatewaysChanged: heard.gatewaysChanged, gatewayNotice: heard.notice)
        }
        return FedOutcome(outcome: ingest.ingest(message, route: route, at: now))
    }

    mutating func applied(_ outputs: [EngineOutput]) { ingest.applied(outputs) }

    func gatewaysPayload(at now: Timestamp) -> JSONValue { telemetry.gateways.payload(at: now) }

    var lookalikes: LookalikeBoard { ingest.lookalikes }
}

/// What one message came to, read the way the tests ask: the engine input or request it
/// carries (``effect``), the refusal, the line logged, the look-alike listed.
struct FedOutcome {
    var outcome: IngestOutcome
    var gatewaysChanged = false
    var gatewayNotice: String?

    enum Effect {
        case none
        case telemetry(EngineInput, context: StaticString, refresh: BluetoothAddress?)
        case request(IncomingRequest)
    }

    var effect: Effect {
        for action in outcome {
            switch action {
            case .telemetry(let input, let context, let refresh, _): return .telemetry(input, context: context, refresh: refresh)
            case .request(let request): return .request(request)
            default: continue
            }
        }
        return .none
    }

    /// The refusal: the gateway (or `set`) and what the log says.
    var rejection: (gateway: String, reason: String)? {
        for case .refuse(let refusal) in outcome { return (refusal.gateway, refusal.message) }
        return nil
    }

    /// The last line logged.
    var notice: (level: BridgeLogger.Level, message: String)? {
        var last: (level: BridgeLogger.Level, message: String)?
        for case .log(let level, let message) in outcome { last = (level, message) }
        return last ?? gatewayNotice.map { (.info, $0) }
    }

    var fastPairIgnored: (accessory: BluetoothAddress, reason: FastPairAdvertisement.UnknownLayout, data: [UInt8])? {
        for case .ignoreFastPair(let accessory, let reason, let data) in outcome { return (accessory, reason, data) }
        return nil
    }

    var lookalikeHeard: Bool { outcome.contains { if case .lookalikeHeard = $0 { true } else { false } } }

    var announcement: String? {
        for case .telemetry(_, _, _, let announcement?) in outcome { return announcement }
        return nil
    }
}
