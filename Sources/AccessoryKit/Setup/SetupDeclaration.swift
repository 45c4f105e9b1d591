/// What the bridge declares it may discover (the Info.plist analog:
/// `NSAccessorySetupSupports`, `NSAccessorySetupBluetoothServices|Names|CompanyIdentifiers`).
public struct SetupDeclaration: Hashable, Sendable {
    /// A declared technology (`setup.supports`).
    public enum Technology: String, Hashable, Sendable {
        case bluetooth
        case wifi
    }

    public var supports: Set<Technology>
    public var bluetoothServices: Set<BluetoothUUID>
    public var bluetoothNames: Set<String>
    public var bluetoothCompanyIdentifiers: Set<UInt16>

    /// Creates a declaration.
    public init(
        supports: Set<Technology> = [], bluetoothServices: Set<BluetoothUUID> = [],
        bluetoothNames: Set<String> = [], bluetoothCompanyIdentifiers: Set<UInt16> = []
    ) {
        self.supports = supports
        self.bluetoothServices = bluetoothServices
        self.bluetoothNames = bluetoothNames
        self.bluetoothCompanyIdentifiers = bluetoothCompanyIdentifiers
    }
}
