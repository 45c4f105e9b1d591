/// The physical form of a product, which decides what a wear sensor's `worn: true` means.
public enum HardwareType: String, CaseIterable, Hashable, Sendable {
    case inEarBud
    case onEarHeadphone
    case overEarHeadphone

    /// The placement a worn accessory of this type is in.
    public var wornPlacement: AccessoryControlDevice.Placement {
        switch self {
        case .inEarBud: .inEar
        case .onEarHeadphone: .onHead
        case .overEarHeadphone: .overTheEar
        }
    }
}
