/// The kind of audio hardware, which decides what "worn" means.
public enum AccessoryHardware: String, Hashable, Sendable, CaseIterable {
    case inEarBud
    case onEarHeadphone
    case overEarHeadphone
}
