/// Topics a component claims (``RuntimeComponent/claims``): ``TopicRouter`` routes them to it
/// with a route of their own, and the runtime subscribes to them.
enum TopicClaim: Sendable, Hashable {
    /// `<base>/bridge/pairing/set` (QoS 1, one-off).
    case pairingForm
    /// `<base>/bridge/reattach/set` (QoS 1, one-off).
    case reattachForm
    /// `<base>/bridge/state`, `<base>/accessory/+` and `<base>/source/+/route`, as the broker
    /// holds them (QoS 1).
    case clusterMirrors
}
