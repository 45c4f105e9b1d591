/// Where an audio accessory is relative to its wearer (AudioAccessoryKit's device placement).
public enum Placement: String, Hashable, Sendable, CaseIterable {
    case inEar
    case onHead
    case overTheEar
    case offHead

    /// Whether the accessory counts as worn.
    public var isWorn: Bool { self != .offHead }

    /// Placement from a wear sensor (domain.md, "Placement from telemetry"): not worn is `offHead`;
    /// worn depends on the hardware: in-ear bud `inEar`, on-ear `onHead`, over-ear `overTheEar`.
    public init(worn: Bool, hardware: AccessoryHardware) {
        guard worn else { self = .offHead; return }
        switch hardware {
        case .inEarBud: self = .inEar
        case .onEarHeadphone: self = .onHead
        case .overEarHeadphone: self = .overTheEar
        }
    }
}
