/// One broken descriptor (or migration item) rule, naming the configuration key so
/// the loader can prefix its path (`products[1].descriptor.<field>`).
public struct DescriptorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Each rule of domain.md, so tests and callers can tell them apart.
    public enum Rule: String, CaseIterable, Hashable, Sendable {
        case emptyDescriptor
        case bluetoothNeedsIdentifier
        case nameSubstringNeedsIdentifier
        case nameSubstringEmpty
        case manufacturerBlobWithoutMask
        case manufacturerMaskWithoutBlob
        case manufacturerBlobMaskLength
        case manufacturerDataNeedsCompanyIdentifier
        case serviceBlobWithoutMask
        case serviceMaskWithoutBlob
        case serviceBlobMaskLength
        case serviceDataNeedsServiceUUID
        case ssidAndPrefix
        case ssidEmpty
        case ssidPrefixEmpty
        case bluetoothNotDeclared
        case wifiNotDeclared
        case companyIdentifierNotDeclared
        case serviceUUIDNotDeclared
        case nameSubstringNotDeclared
        case migrationSSIDPrefix
        case migrationUnknownProduct
    }

    /// The configuration key, e.g. `bluetooth_manufacturer_data_mask`.
    public var field: String
    /// Which rule.
    public var rule: Rule
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates an error.
    public init(field: String, rule: Rule, message: String) {
        self.field = field
        self.rule = rule
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
