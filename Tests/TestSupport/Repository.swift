import Foundation

/// Files of this repository (fixtures, docs, built binaries), found from this file's path.
public enum Repository {
    /// The repository root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file under the repository root.
    public static func file(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }
}

/// Configuration texts shared by test targets that load YAML.
public enum SampleConfiguration {
    /// A valid setup plus one valid product, for tests that break one thing.
    public static let validBase = """
        setup:
          supports: [bluetooth]
          bluetooth:
            company_identifiers: [0x004C]
            services: ["FE2C"]
            names: ["Acme"]
        products:
          - name: AirPods Pro
            hardware: inEarBud
            placement_decoder: apple_proximity
            descriptor:
              bluetooth_company_identifier: 0x004C
              bluetooth_manufacturer_data_blob: "0719"
              bluetooth_manufacturer_data_mask: "ffff"

        """
}
