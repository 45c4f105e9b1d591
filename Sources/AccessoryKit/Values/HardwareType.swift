/// The physical form of a product, which decides what a wear sensor's `worn: true` means.
public enum HardwareType: String, CaseIterable, Hashable, Sendable {
    case inEarBud
    case onEarHeadphone
    case overEarHeadphone

    /// The placement a wear-sensor reading means for this hardware (domain.md, "Placement from
    /// telemetry"): not worn is `offHead`; worn is `inEar` for a bud, `onHead` on-ear,
    /// `overTheEar` over-ear. The one place this mapping is written.
    public func placement(worn: Bool) -> AccessoryControlDevice.Placement {
        guard worn else { return .offHead }
        return switch self {
        case .inEarBud: .inEar
        case .onEarHeadphone: .onHead
        case .overEarHeadphone: .overTheEar
        }
    }
}
