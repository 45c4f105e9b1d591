/// What an Apple proximity-pairing advertisement says an accessory is, as far as telling
/// look-alikes apart goes: its model and its colour (household.md, "Found again after a night").
///
/// Two accessories with the same profile cannot be told apart by their advertisements alone;
/// one with another profile is certainly not the same accessory.
public struct ProximityProfile: Hashable, Sendable {
    /// The proximity-pairing model identifier (`0x2014`: AirPods Pro 2).
    public var model: UInt16
    /// The colour code, when the advertisement carries one.
    public var colour: UInt8?

    public init(model: UInt16, colour: UInt8?) {
        self.model = model
        self.colour = colour
    }
}
