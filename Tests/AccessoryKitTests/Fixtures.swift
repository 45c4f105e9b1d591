@testable import AccessoryKit

/// Shared products, addresses and a harness that feeds the engine with a test clock.
enum Fixtures {
    static let appleCompany: UInt16 = 0x004C
    static let acmeCompany: UInt16 = 0x0A12
    static let fe2c = BluetoothUUID("FE2C")!

    static let buds = Product(
        name: "AirPods Pro", hardware: .inEarBud, capabilities: [.audioSwitching, .placement],
        setupOptions: [.rename],
        descriptor: DiscoveryDescriptor(
            bluetoothCompanyIdentifier: appleCompany,
            bluetoothManufacturerDataBlob: [0x07, 0x19], bluetoothManufacturerDataMask: [0xFF, 0xFF]))
    static let studio = Product(
        name: "Acme Studio", hardware: .overEarHeadphone, capabilities: [.audioSwitching, .placement],
        descriptor: DiscoveryDescriptor(bluetoothServiceUUID: fe2c, bluetoothNameSubstring: "Acme"))
    /// Hardware without a wear sensor: audio switching only.
    static let basic = Product(
        name: "Basic", hardware: .onEarHeadphone, capabilities: [.audioSwitching],
        descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: acmeCompany))
    static let bridged = Product(
        name: "Bridged", hardware: .inEarBud, capabilities: [.audioSwitching, .placement], autoRegister: true,
        setupOptions: [.confirmAuthorization],
        descriptor: DiscoveryDescriptor(
            bluetoothCompanyIdentifier: acmeCompany, bluetoothNameSubstring: "Acme", supportedOptions: [.bluetoothTransportBridging]))

    static let declaration = SetupDeclaration(
        supports: [.bluetooth], bluetoothServices: [fe2c], bluetoothNames: ["Acme"],
        bluetoothCompanyIdentifiers: [appleCompany, acmeCompany])

    static func configuration(
        products: [Product] = [buds, studio, basic], debounce: Int64 = 0, migrations: [MigrationItem] = []
    ) -> EngineConfiguration {
        EngineConfiguration(
            products: products, declaration: declaration,
            switching: SwitchingSettings(placementDebounceMilliseconds: debounce, availabilityTimeoutSeconds: 120, immediateRSSI: -50),
            migrations: migrations)
    }

    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: 0xA1B2_C3D4_0000 | n) }
    static let phone = BluetoothAddress("11:22:33:44:55:66")!
    static let laptop = BluetoothAddress("11:22:33:44:55:77")!
    static let tv = BluetoothAddress("11:22:33:44:55:88")!

    /// An advertisement that matches `product`'s descriptor.
    static func sighting(
        _ id: BluetoothAddress, for product: Product, rssi: Int = -60, gateway: String = "kitchen",
        decoded: AdvertisementSighting.Decoded? = nil
    ) -> AdvertisementSighting {
        switch product.name {
        case studio.name:
            return AdvertisementSighting(
                gateway: gateway, accessoryID: id, rssi: rssi, name: "Acme Studio 7", serviceUUIDs: [fe2c], decoded: decoded)
        case buds.name:
            return AdvertisementSighting(
                gateway: gateway, accessoryID: id, rssi: rssi, name: "AirPods",
                manufacturerData: ManufacturerData(companyIdentifier: appleCompany, payload: [0x07, 0x19, 0x01]), decoded: decoded)
        default:
            return AdvertisementSighting(
                gateway: gateway, accessoryID: id, rssi: rssi, name: "Acme Thing",
                manufacturerData: ManufacturerData(companyIdentifier: acmeCompany, payload: [0x01]), decoded: decoded)
        }
    }
}

/// The engine plus a clock the test moves by hand.
struct Harness {
    var engine: BridgeEngine
    var now = Timestamp(milliseconds: 1_800_000_000_000)
    var log: [EngineOutput] = []

    init(_ configuration: EngineConfiguration = Fixtures.configuration(), restored: RestoredState = .init(), activate: Bool = true) {
        engine = BridgeEngine(configuration: configuration, restored: restored)
        if activate { send(.activate) }
    }

    @discardableResult
    mutating func send(_ input: EngineInput) -> EngineStep {
        let step = engine.handle(input, at: now)
        log += step.outputs
        return step
    }

    @discardableResult
    mutating func request(_ request: Request, role: AccessoryControlDevice.Role = .container) -> EngineStep {
        send(.request(request, role: role))
    }

    @discardableResult
    mutating func report(_ id: BluetoothAddress, _ changes: AccessoryReport.Change..., gateway: String? = "kitchen") -> EngineStep {
        send(.report(AccessoryReport(accessory: id, gateway: gateway, changes: changes)))
    }

    @discardableResult
    mutating func advance(_ milliseconds: Int64) -> EngineStep {
        now = now.advanced(byMilliseconds: milliseconds)
        return send(.tick)
    }

    /// Pairs an accessory through the picker.
    @discardableResult
    mutating func pair(_ id: BluetoothAddress, _ product: Product, name: String? = nil) -> EngineStep {
        request(.showPicker(products: [product.name], timeout: .default))
        send(.sighting(Fixtures.sighting(id, for: product)))
        return request(.selectCandidate(id, name: name))
    }

    /// Pairs and registers in one go.
    @discardableResult
    mutating func pairAndRegister(
        _ id: BluetoothAddress, _ product: Product, capabilities: AccessoryControlDevice.Capabilities? = nil,
        placement: AccessoryControlDevice.Placement? = nil, primary: BluetoothAddress? = nil, secondary: BluetoothAddress? = nil
    ) -> EngineStep {
        pair(id, product)
        return request(
            .register(
                id,
                RegistrationRequest(
                    capabilities: capabilities ?? product.capabilities, placement: placement, primarySource: primary,
                    secondarySource: secondary)))
    }

    func configuration(_ id: BluetoothAddress) -> AccessoryControlDevice.Configuration? {
        engine.registry[id]?.configuration
    }
}

extension EngineStep {
    var events: [SetupEvent] { outputs.compactMap { if case .event(let e) = $0 { e } else { nil } } }
    var eventTypes: [SetupEvent.EventType] { events.map(\.type) }
    var decisions: [Decision] { outputs.compactMap { if case .decision(let d) = $0 { d } else { nil } } }
    var routeChanges: [RouteChange] { outputs.compactMap { if case .routeChanged(let r) = $0 { r } else { nil } } }
    var errors: [AccessoryControlDevice.Error] { outputs.compactMap { if case .accessoryError(_, let e) = $0 { e } else { nil } } }
    var storage: [StorageWrite] { outputs.compactMap { if case .storage(let s) = $0 { s } else { nil } } }
    var setupErrorCode: SetupError.Code? {
        if case .failure(.setup(let error)) = result { return error.code }
        return nil
    }
    var controlErrorCode: AccessoryControlDevice.Error.Code? {
        if case .failure(.accessoryControl(let error)) = result { return error.code }
        return nil
    }
    var controlError: AccessoryControlDevice.Error? {
        if case .failure(.accessoryControl(let error)) = result { return error }
        return nil
    }
    var succeeded: Bool {
        if case .success = result { return true }
        return false
    }
}
