import Foundation
import TestSupport
import Testing

@testable import Configuration

/// Configurations that load but cannot work (identity.md, Configuration that cannot work):
/// warnings with key paths, exit 0; errors stay exit 2.
@Suite("validate warnings: what loads but cannot work")
struct ConfigurationAdviceTests {
    static let setup = """
        setup:
          supports: [bluetooth]
          bluetooth:
            company_identifiers: [0x004C]
            services: ["FE2C"]

        """

    static func warnings(_ yaml: String) throws -> [ConfigurationIssue] {
        try ConfigurationLoader.load(yaml: setup + yaml, hostname: "test").get().warnings
    }

    static let appleProduct = """
          - name: AirPods
            hardware: inEarBud
            placement_decoder: apple_proximity
            capabilities: [audioSwitching, placement]
            descriptor:
              bluetooth_company_identifier: 0x004C
              bluetooth_manufacturer_data_blob: "0719"
              bluetooth_manufacturer_data_mask: "ffff"

        """

    @Test("the shipped configuration and the demo's have no warning", arguments: ["config/aabridge.yaml", "config/examples/demo.yaml"])
    func shipped(file: String) throws {
        let configuration = try ConfigurationLoader.load(path: Repository.file(file), environment: [:]).get()
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        let (status, report) = ConfigurationLoader.validate(path: Repository.file(file), environment: [:])
        #expect(status == 0)
        #expect(!report.contains("warning"))
    }

    @Test("placement declared with nothing to report it: a warning at the product's capabilities")
    func placementWithoutReporter() throws {
        let product = """
            products:
            \(Self.appleProduct)  - name: Headphones
                hardware: overEarHeadphone
                capabilities: [audioSwitching, placement]
                descriptor: {bluetooth_service_uuid: "FE2C"}
            gateways:
              - {name: omg, format: openmqttgateway}

            """
        let found = try Self.warnings(product)
        #expect(found.map(\.path) == ["products[1].capabilities"])
        #expect(found.first?.message.contains("never be routed") == true)
        #expect(found.first?.origin != nil, "the warning names the line")
        // A native gateway can report it: no warning.
        #expect(try Self.warnings(product + "  - {name: native, format: native}\n").isEmpty)
        // Without placement in the capabilities there is nothing to report.
        #expect(
            try Self.warnings(
                product.replacingOccurrences(
                    of: "[audioSwitching, placement]\n    descriptor: {", with: "[audioSwitching]\n    descriptor: {")
            ).isEmpty)
    }

    @Test("an Apple descriptor that pins the model: a warning at its blob, with how many models it lets through")
    func narrowAppleDescriptor() throws {
        let narrow =
            "products:\n"
            + Self.appleProduct.replacingOccurrences(of: "\"0719\"", with: "\"0719010e20\"")
            .replacingOccurrences(of: "\"ffff\"", with: "\"ffffffffff\"")
        let found = try Self.warnings(narrow)
        #expect(found.map(\.path) == ["products[0].descriptor.bluetooth_manufacturer_data_blob"])
        #expect(found.first?.message.contains("matches only 1 of the") == true)
        #expect(found.first?.message.contains("AirPods Pro") == true)
        #expect(try Self.warnings("products:\n" + Self.appleProduct).isEmpty)
        // A descriptor that is no proximity-pairing pattern at all is another matter: no warning.
        let other = "products:\n" + Self.appleProduct.replacingOccurrences(of: "\"0719\"", with: "\"1005\"")
        #expect(try Self.warnings(other).isEmpty)
    }

    @Test("a source that is also an accessory: a warning at the source")
    func sourceIsAccessory() throws {
        let yaml = """
            products:
            \(Self.appleProduct)accessories:
              - {id: "A1:B2:C3:D4:E5:F6", name: Buds, product: AirPods}
            sources:
              - {address: "11:22:33:44:55:66", name: Phone}
              - {address: "a1:b2:c3:d4:e5:f6", name: Buds again}

            """
        let found = try Self.warnings(yaml)
        #expect(found.map(\.path) == ["sources[1].address"])
    }

    @Test("validate: warnings are listed with key paths and exit 0; an error exits 2")
    func validateExitStatus() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-advice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("warned.yaml").path
        let narrow =
            Self.setup + "products:\n"
            + Self.appleProduct.replacingOccurrences(of: "\"0719\"", with: "\"0719010e20\"")
            .replacingOccurrences(of: "\"ffff\"", with: "\"ffffffffff\"")
        try narrow.write(toFile: file, atomically: true, encoding: .utf8)
        let (status, report) = ConfigurationLoader.validate(path: file, environment: [:])
        #expect(status == 0)
        #expect(report.contains("1 warning:"))
        #expect(report.contains("products[0].descriptor.bluetooth_manufacturer_data_blob: matches only 1"))
        try (narrow + "log:\n  level: loud\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(ConfigurationLoader.validate(path: file, environment: [:]).exitStatus == 2)
    }
}
