/// Where the entries of `bridge/accessories` come from: the states this bridge published
/// (``PublishedStates``), or in a cluster every instance's, as the broker holds them
/// (``MirroredStates``). The runtime hands one to ``Publisher`` when it is made.
protocol AccessoryListing: AnyObject {
    /// An entry changed since ``listIsCurrent()``.
    var changed: Bool { get }

    /// `[` + each accessory's state object, by id + `]`, as JSONValue writes an array.
    func list() -> [UInt8]

    /// The list as it is now went out (or is not this instance's to publish).
    func listIsCurrent()
}
