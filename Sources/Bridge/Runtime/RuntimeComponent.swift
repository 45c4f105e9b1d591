import AccessoryKit
import MQTT

/// A feature of the runtime: a source of sightings (the MQTT gateways), the forms, health,
/// the look-alikes, Home Assistant's status, the HTTP side, cluster mode.
///
/// In the spirit of zigbee2mqtt's `Extension` and swift-service-lifecycle's `Service`: a
/// component owns its state, claims its topics (``claims``, handed back as messages with the
/// claim's tag), posts its own events through its ``ComponentMailbox`` (handed back to it
/// alone), reacts to every engine step the loop has applied, says when it next has something
/// due, publishes its retained topics again whenever the bridge's go out again, and stops at
/// shutdown. The loop calls it, always from its one task, with its ``ComponentContext``: the
/// only way it reaches the rest of the bridge. Every hook has a default that does nothing.
///
/// A new component: a type with the hooks it needs, and a line in
/// ``RuntimeComponents/make(for:ownership:)`` (docs/architecture.md, "Components").
protocol RuntimeComponent: AnyObject {
    /// The topics it claims, in the order they are tried.
    var claims: [TopicClaim] { get }

    /// The session is activated and its first commit stored; nothing is subscribed yet.
    func start(_ context: ComponentContext) async

    /// A message on a topic it claims (`tag`: the claim's).
    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async

    /// One of its own events, as its mailbox posted it.
    func handle(event: any Sendable, _ context: ComponentContext) async

    /// An engine step's outputs, after the stages applied and published them.
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext)

    /// When it next has something due (nil: nothing); the loop wakes for the earliest.
    func nextDue(at now: Timestamp) -> Timestamp?

    /// The loop woke (something may be due: ``nextDue(at:)``'s time, or another's).
    func wake(at now: Timestamp, _ context: ComponentContext)

    /// Every retained topic goes out again (a connection, Home Assistant's birth, a takeover).
    func republish(at now: Timestamp, _ context: ComponentContext)

    /// Its retained topics as they are now, relative to the base topic (what a new console
    /// stream is sent first).
    func snapshot(at now: Timestamp, _ context: ComponentContext) -> [(topic: String, payload: [UInt8])]

    /// What `bridge/accessories` lists, when the component knows more than this bridge
    /// published (a cluster: every instance's states).
    var accessoryListing: (any AccessoryListing)? { get }

    /// Its families in `/metrics`.
    func metrics(_ text: inout MetricsText, _ context: ComponentContext)

    /// Shutdown began: nothing more is handled (the loop has ended).
    func shutdownBegins(_ context: ComponentContext)

    /// Whether the bridge as a whole stays online after this process ends (another live
    /// cluster instance): then it does not say `offline` on `bridge/state`.
    var keepsBridgeOnline: Bool { get }

    /// The session has ended and its last writes are stored; `offline` comes next.
    func stop(_ context: ComponentContext) async
}

extension RuntimeComponent {
    var claims: [TopicClaim] { [] }
    func start(_ context: ComponentContext) async {}
    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async {}
    func handle(event: any Sendable, _ context: ComponentContext) async {}
    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {}
    func nextDue(at now: Timestamp) -> Timestamp? { nil }
    func wake(at now: Timestamp, _ context: ComponentContext) {}
    func republish(at now: Timestamp, _ context: ComponentContext) {}
    func snapshot(at now: Timestamp, _ context: ComponentContext) -> [(topic: String, payload: [UInt8])] { [] }
    var accessoryListing: (any AccessoryListing)? { nil }
    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {}
    func shutdownBegins(_ context: ComponentContext) {}
    var keepsBridgeOnline: Bool { false }
    func stop(_ context: ComponentContext) async {}
}
