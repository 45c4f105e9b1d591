/// Where a source device's audio goes.
public enum RouteTarget: Hashable, Sendable, CustomStringConvertible {
    /// To this accessory.
    case accessory(BluetoothAddress)
    /// The source's own output.
    case fallback

    /// The accessory, if routed to one.
    public var accessory: BluetoothAddress? {
        if case .accessory(let id) = self { return id }
        return nil
    }

    /// The address or `fallback`, as in `source/<ID>/route`.
    public var description: String { accessory?.description ?? "fallback" }
}
