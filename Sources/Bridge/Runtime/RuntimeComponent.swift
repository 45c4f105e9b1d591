import AccessoryKit
import MQTT

/// An optional feature of the runtime: the pairing form, cluster mode, the HTTP side.
///
/// In the spirit of zigbee2mqtt's `Extension` and swift-service-lifecycle's `Service`: a
/// component owns its state, claims its topics through ``TopicRouter`` (and is handed the
/// messages on them), reacts to every engine step the loop has applied, publishes its retained
/// topics again whenever the bridge's go out again, and stops at shutdown. The loop
/// (``BridgeRuntime``) calls it, always from its one task, and the component reaches the
/// stages through the runtime it is handed. Every hook has a default that does nothing.
///
/// A new component: a type here, made in ``BridgeRuntime``'s `init` from the configuration,
/// with a ``TopicClaim`` (and an ``IngestRoute`` case) for topics of its own and a
/// ``RuntimeEvent`` case for events of its own (docs/architecture.md, "Components").
protocol RuntimeComponent: AnyObject {
    /// The topics it claims.
    var claims: Set<TopicClaim> { get }

    /// The loop starts: the session is activated, nothing is subscribed yet.
    func start(_ runtime: BridgeRuntime)

    /// A message on a topic it claims (`route` is the one ``TopicRouter`` gave it).
    func handle(_ message: MQTTMessage, route: IngestRoute, _ runtime: BridgeRuntime) async

    /// One of the runtime's events; a component acts on its own kind (``RuntimeEvent/http(_:)``,
    /// ``RuntimeEvent/cluster(_:)``) and ignores the rest.
    func handle(_ event: RuntimeEvent, _ runtime: BridgeRuntime) async

    /// An engine step's outputs, after the stages applied and published them.
    func applied(_ outputs: [EngineOutput], _ runtime: BridgeRuntime)

    /// Every retained topic goes out again (a connection, Home Assistant's birth, a takeover).
    func republish(_ runtime: BridgeRuntime)

    /// What `bridge/accessories` lists, when the component knows more than this bridge
    /// published (a cluster: every instance's states).
    var accessoryListing: (any AccessoryListing)? { get }

    /// Its families in `/metrics`.
    func metrics(_ text: inout MetricsText, _ runtime: BridgeRuntime)

    /// Shutdown began: nothing more is handled (the loop has ended).
    func shutdownBegins(_ runtime: BridgeRuntime)

    /// Whether the bridge as a whole stays online after this process ends (another live
    /// cluster instance): then it does not say `offline` on `bridge/state`.
    var keepsBridgeOnline: Bool { get }

    /// The session has ended and its last writes are stored; `offline` comes next.
    func stop(_ runtime: BridgeRuntime) async
}

extension RuntimeComponent {
    var claims: Set<TopicClaim> { [] }
    func start(_ runtime: BridgeRuntime) {}
    func handle(_ message: MQTTMessage, route: IngestRoute, _ runtime: BridgeRuntime) async {}
    func handle(_ event: RuntimeEvent, _ runtime: BridgeRuntime) async {}
    func applied(_ outputs: [EngineOutput], _ runtime: BridgeRuntime) {}
    func republish(_ runtime: BridgeRuntime) {}
    var accessoryListing: (any AccessoryListing)? { nil }
    func metrics(_ text: inout MetricsText, _ runtime: BridgeRuntime) {}
    func shutdownBegins(_ runtime: BridgeRuntime) {}
    var keepsBridgeOnline: Bool { false }
    func stop(_ runtime: BridgeRuntime) async {}
}
