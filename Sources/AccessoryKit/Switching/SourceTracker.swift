/// The ordered list of source devices an accessory is connected to.
///
/// primary = first, secondary = second. Every operation reports whether the list
/// changed, so the caller sends an update exactly when identifiers change.
public struct SourceTracker: Hashable, Sendable {
    /// Connected sources, most preferred first.
    public private(set) var sources: [BluetoothAddress]

    /// Creates a tracker.
    public init(sources: [BluetoothAddress] = []) {
        self.sources = sources
    }

    /// The first source.
    public var primary: BluetoothAddress? { sources.first }
    /// The second source.
    public var secondary: BluetoothAddress? { sources.count > 1 ? sources[1] : nil }

    /// Replaces the list (a full `sources` report). Duplicates are kept so that
    /// the registry can refuse primary == secondary rather than hide it.
    @discardableResult
    public mutating func replace(with sources: [BluetoothAddress]) -> Bool {
        guard sources != self.sources else { return false }
        self.sources = sources
        return true
    }

    /// Appends a newly connected source; already connected is no change.
    @discardableResult
    public mutating func connect(_ source: BluetoothAddress) -> Bool {
        guard !sources.contains(source) else { return false }
        sources.append(source)
        return true
    }

    /// Removes a disconnected source; the rest shift up.
    @discardableResult
    public mutating func disconnect(_ source: BluetoothAddress) -> Bool {
        guard let index = sources.firstIndex(of: source) else { return false }
        sources.remove(at: index)
        return true
    }

    /// Moves a source to the front; a source not yet listed is connected at the front
    /// (an accessory only prefers a source it is connected to).
    @discardableResult
    public mutating func prefer(_ source: BluetoothAddress) -> Bool {
        guard sources.first != source else { return false }
        sources.removeAll { $0 == source }
        sources.insert(source, at: 0)
        return true
    }

    /// Forgets every source (the accessory became unavailable).
    @discardableResult
    public mutating func clear() -> Bool {
        guard !sources.isEmpty else { return false }
        sources.removeAll()
        return true
    }
}
