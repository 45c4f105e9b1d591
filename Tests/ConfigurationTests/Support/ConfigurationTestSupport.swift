import Foundation
import TestSupport
import Testing

@testable import Configuration

/// Helpers shared by the configuration tests: real YAML through libyaml, no mocks.
enum ConfigurationTestSupport {
    /// A file under the repository root.
    static func repositoryFile(_ relative: String) -> String { Repository.file(relative) }

    /// The issues for a YAML text, or [] when it loads.
    static func issues(_ yaml: String, environment: [String: String] = [:]) -> [ConfigurationIssue] {
        switch ConfigurationLoader.load(yaml: yaml, environment: environment, hostname: "testhost") {
        case .success: []
        case let .failure(errors): errors.issues
        }
    }

    /// The configuration for a YAML text; records a test failure with the issues when it does not load.
    static func load(
        _ yaml: String, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> BridgeConfiguration {
        switch ConfigurationLoader.load(yaml: yaml, environment: environment, hostname: "testhost") {
        case let .success(configuration): return configuration
        case let .failure(errors):
            Issue.record("unexpected configuration errors:\n\(errors)", sourceLocation: sourceLocation)
            throw errors
        }
    }

    /// A temporary file with the given bytes, in its own directory; pass the path to `remove` when done.
    static func temporaryFile(_ bytes: [UInt8], name: String = "config.yaml") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// A valid setup plus one valid product, for tests that break one thing.
    static let validBase = SampleConfiguration.validBase

    /// Removes a file made by `temporaryFile` and its directory.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}
