import Testing

@testable import AccessoryKit

@Suite("Discovery descriptor validation")
struct DescriptorValidationTests {
    typealias D = DiscoveryDescriptor
    static let fe2c = Fixtures.fe2c

    /// Each row breaks exactly one rule of domain.md; the rule and the named field must be reported.
    static let broken: [(String, D, DescriptorError.Rule, String)] = [
        ("empty", D(), .emptyDescriptor, "descriptor"),
        ("bluetooth without identifier", D(bluetoothRange: .immediate), .bluetoothNeedsIdentifier, "bluetooth_company_identifier"),
        ("name without identifier", D(bluetoothNameSubstring: "Acme"), .nameSubstringNeedsIdentifier, "bluetooth_name_substring"),
        ("empty name", D(bluetoothCompanyIdentifier: 0x004C, bluetoothNameSubstring: ""), .nameSubstringEmpty, "bluetooth_name_substring"),
        (
            "manufacturer blob without mask", D(bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [1]),
            .manufacturerBlobWithoutMask, "bluetooth_manufacturer_data_mask"
        ),
        (
            "manufacturer mask without blob", D(bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataMask: [1]),
            .manufacturerMaskWithoutBlob, "bluetooth_manufacturer_data_blob"
        ),
        (
            "manufacturer lengths differ",
            D(bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [1, 2], bluetoothManufacturerDataMask: [1]),
            .manufacturerBlobMaskLength, "bluetooth_manufacturer_data_mask"
        ),
        (
            "manufacturer data without company",
            D(bluetoothServiceUUID: fe2c, bluetoothManufacturerDataBlob: [1], bluetoothManufacturerDataMask: [1]),
            .manufacturerDataNeedsCompanyIdentifier, "bluetooth_company_identifier"
        ),
        (
            "service blob without mask", D(bluetoothServiceUUID: fe2c, bluetoothServiceDataBlob: [1]), .serviceBlobWithoutMask,
            "bluetooth_service_data_mask"
        ),
        (
            "service mask without blob", D(bluetoothServiceUUID: fe2c, bluetoothServiceDataMask: [1]), .serviceMaskWithoutBlob,
            "bluetooth_service_data_blob"
        ),
        (
            "service lengths differ", D(bluetoothServiceUUID: fe2c, bluetoothServiceDataBlob: [1], bluetoothServiceDataMask: [1, 2]),
            .serviceBlobMaskLength, "bluetooth_service_data_mask"
        ),
        (
            "service data without service",
            D(bluetoothCompanyIdentifier: 0x004C, bluetoothServiceDataBlob: [1], bluetoothServiceDataMask: [1]),
            .serviceDataNeedsServiceUUID, "bluetooth_service_uuid"
        ),
        ("ssid and prefix", D(ssid: "Acme-1", ssidPrefix: "Acme"), .ssidAndPrefix, "ssid_prefix"),
        ("empty ssid", D(ssid: ""), .ssidEmpty, "ssid"),
        ("empty ssid prefix", D(ssidPrefix: ""), .ssidPrefixEmpty, "ssid_prefix"),
    ]

    @Test("every descriptor rule gives its own error naming the field", arguments: broken.indices)
    func ruleIsReported(row: Int) {
        let (_, descriptor, rule, field) = Self.broken[row]
        let errors = descriptor.validate(against: nil)
        #expect(errors.contains { $0.rule == rule && $0.field == field }, "\(Self.broken[row].0): \(errors)")
    }

    @Test(
        "valid descriptors give no error",
        arguments: [
            D(bluetoothCompanyIdentifier: 0x004C),
            D(bluetoothServiceUUID: fe2c),
            D(
                bluetoothCompanyIdentifier: 0x004C, bluetoothNameSubstring: "Acme", bluetoothManufacturerDataBlob: [7],
                bluetoothManufacturerDataMask: [0xFF]),
            D(bluetoothServiceUUID: fe2c, bluetoothServiceDataBlob: [1, 2], bluetoothServiceDataMask: [0xFF, 0]),
            D(ssid: "Acme-1"),
            D(ssidPrefix: "Acme"),
        ])
    func validHasNoError(descriptor: D) {
        #expect(descriptor.validate(against: nil).isEmpty)
    }

    @Test func allErrorsAreReportedAtOnce() {
        let descriptor = D(
            bluetoothNameSubstring: "Acme", bluetoothManufacturerDataBlob: [1, 2], bluetoothManufacturerDataMask: [1], ssid: "a",
            ssidPrefix: "b")
        let rules = Set(descriptor.validate(against: nil).map(\.rule))
        #expect(
            rules.isSuperset(of: [
                .bluetoothNeedsIdentifier, .nameSubstringNeedsIdentifier, .manufacturerBlobMaskLength,
                .manufacturerDataNeedsCompanyIdentifier, .ssidAndPrefix,
            ]))
    }

    /// The declaration (Info.plist analog) must cover what each descriptor uses.
    static let undeclared: [(String, D, SetupDeclaration, DescriptorError.Rule)] = [
        (
            "bluetooth not in supports", D(bluetoothCompanyIdentifier: 0x004C),
            SetupDeclaration(supports: [.wifi], bluetoothCompanyIdentifiers: [0x004C]), .bluetoothNotDeclared
        ),
        ("wifi not in supports", D(ssid: "Acme-1"), SetupDeclaration(supports: [.bluetooth]), .wifiNotDeclared),
        (
            "company not declared", D(bluetoothCompanyIdentifier: 0x004C),
            SetupDeclaration(supports: [.bluetooth], bluetoothCompanyIdentifiers: [0x0A12]), .companyIdentifierNotDeclared
        ),
        (
            "service not declared", D(bluetoothServiceUUID: fe2c),
            SetupDeclaration(supports: [.bluetooth], bluetoothServices: [BluetoothUUID("180F")!]), .serviceUUIDNotDeclared
        ),
        (
            "name not declared", D(bluetoothServiceUUID: fe2c, bluetoothNameSubstring: "Acme"),
            SetupDeclaration(supports: [.bluetooth], bluetoothServices: [fe2c], bluetoothNames: ["Other"]), .nameSubstringNotDeclared
        ),
    ]

    @Test("the setup declaration must declare what descriptors use", arguments: undeclared.indices)
    func declarationRule(row: Int) {
        let (name, descriptor, declaration, rule) = Self.undeclared[row]
        let errors = descriptor.validate(against: declaration)
        #expect(errors.map(\.rule) == [rule], "\(name)")
        #expect(descriptor.validate(against: nil).isEmpty, "\(name) is valid on its own")
    }

    @Test func longServiceSpellingMatchesDeclaredShortForm() {
        let descriptor = D(bluetoothServiceUUID: BluetoothUUID("0000FE2C-0000-1000-8000-00805F9B34FB"))
        #expect(descriptor.validate(against: Fixtures.declaration).isEmpty)
    }

    @Test func configurationIssuesCarryKeyPaths() {
        var bad = Fixtures.studio
        bad.descriptor.bluetoothServiceDataBlob = [1]
        let configuration = EngineConfiguration(
            products: [Fixtures.buds, bad], declaration: Fixtures.declaration,
            migrations: [MigrationItem(id: Fixtures.address(1), name: "x", product: "Nope", ssidPrefix: "Acme")])
        let paths = configuration.validate().map(\.path)
        #expect(paths.contains("products[1].descriptor.bluetooth_service_data_mask"))
        #expect(paths.contains("accessories[0].ssid_prefix"))
        #expect(paths.contains("accessories[0].product"))
        #expect(Fixtures.configuration().validate().isEmpty)
    }

    @Test func migrationNeedsAFullSSID() {
        let prefix = MigrationItem(id: Fixtures.address(1), name: "x", product: Fixtures.buds.name, ssidPrefix: "Acme")
        #expect(prefix.validate(products: [Fixtures.buds]).map(\.rule) == [.migrationSSIDPrefix])
        let full = MigrationItem(id: Fixtures.address(1), name: "x", product: Fixtures.buds.name, ssid: "Acme-1")
        #expect(full.validate(products: [Fixtures.buds]).isEmpty)
    }
}
