import Foundation
import Testing

@testable import Configuration

/// The YAML layer over libyaml: styles, nulls, positions, limits.
@Suite struct ConfigurationYAMLTests {
    let parser = YAMLParser()

    private func mapping(_ yaml: String) throws -> [YAMLNode.Entry] {
        let root = try #require(try parser.parse(yaml))
        guard case let .mapping(entries) = root.content else {
            Issue.record("expected a mapping")
            return []
        }
        return entries
    }

    @Test func scalarsKeepTheirTextStyleAndPosition() throws {
        let entries = try mapping(
            """
            plain: 0x004C
            quoted: "0x004C"
            single: '0719'
            blob: 0719
            """)
        #expect(entries.map { $0.key.scalar?.value } == ["plain", "quoted", "single", "blob"])
        #expect(entries[0].value.scalar == .init(value: "0x004C", style: .plain))
        #expect(entries[1].value.scalar == .init(value: "0x004C", style: .doubleQuoted))
        #expect(entries[2].value.scalar == .init(value: "0719", style: .singleQuoted))
        // A plain 0719 stays its four characters; nothing reads it as octal.
        #expect(entries[3].value.scalar?.value == "0719")
        #expect(entries[1].value.origin == .file(line: 2, column: 9))
    }

    @Test func nullsAreDistinguishableFromQuotedStrings() throws {
        let entries = try mapping(
            """
            a: null
            b: ~
            c:
            d: "null"
            e: ''
            f: !!null whatever
            """)
        #expect(entries.map(\.value.isNull) == [true, true, true, false, false, true])
    }

    @Test func mappingsKeepKeyOrderAndDuplicates() throws {
        let entries = try mapping("z: 1\na: 2\nz: 3\n")
        #expect(entries.map { $0.key.scalar?.value } == ["z", "a", "z"])
    }

    @Test func syntaxErrorsReportLineAndColumn() {
        #expect {
            _ = try parser.parse("mqtt:\n  server: mqtt://x\n  base_topic: [unclosed\nlog: {}\n")
        } throws: { error in
            guard let error = error as? YAMLError else { return false }
            return error.line != nil && error.line! >= 3 && error.column != nil
        }
        let issues = ConfigurationTestSupport.issues("mqtt:\n  server: mqtt://x\n bad: indentation\n")
        #expect(issues.count == 1)
        if case let .file(line, _)? = issues.first?.origin { #expect(line == 3) } else { Issue.record("no line: \(issues)") }
        #expect(issues.first?.description.contains("line 3") == true)
    }

    @Test func aliasesExpandToTheAnchoredValue() throws {
        let configuration = try ConfigurationTestSupport.load(
            ConfigurationTestSupport.validBase + """
                sources:
                  - address: &phone "11:22:33:44:55:66"
                    name: Alice's iPhone
                mqtt:
                  client_id: *phone
                """)
        #expect(configuration.mqtt.clientID == "11:22:33:44:55:66")
    }

    @Test func billionLaughsIsRefused() {
        var yaml = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...9 {
            let previous = "*a\(level - 1)"
            yaml += "a\(level): &a\(level) [\(Array(repeating: previous, count: 10).joined(separator: ", "))]\n"
        }
        #expect {
            _ = try parser.parse(yaml)
        } throws: { error in
            (error as? YAMLError)?.message.contains("too many aliases") == true
        }
        let issues = ConfigurationTestSupport.issues(yaml)
        #expect(issues.count == 1)
        #expect(issues.first?.message.contains("too many aliases") == true)
    }

    @Test func unknownAliasIsAnError() {
        let issues = ConfigurationTestSupport.issues("mqtt:\n  server: *nowhere\n")
        #expect(issues.count == 1)
        #expect(issues.first.map { $0.message.contains("alias") || $0.message.contains("anchor") } == true)
    }

    @Test func nonUTF8InputIsAnErrorNotACrash() throws {
        var bytes = Array("mqtt:\n  base_topic: ".utf8)
        bytes += [0xC3, 0x28, 0xFF, 0xFE]
        bytes += Array("\n".utf8)
        let path = try ConfigurationTestSupport.temporaryFile(bytes)
        defer { ConfigurationTestSupport.remove(path) }
        guard case let .failure(errors) = ConfigurationLoader.load(path: path, environment: [:]) else {
            Issue.record("non-UTF-8 input loaded")
            return
        }
        #expect(errors.issues.count == 1)
        #expect(errors.issues[0].message.contains("UTF-8"))
    }

    @Test func nulByteIsAnError() {
        #expect(throws: YAMLError.self) { try parser.parse([UInt8]("a: b\n".utf8) + [0] + [UInt8]("c: d\n".utf8)) }
    }

    @Test func oversizeInputIsAnError() throws {
        let line = "# " + String(repeating: "x", count: 1022) + "\n"
        let text = String(repeating: line, count: 1025)
        let path = try ConfigurationTestSupport.temporaryFile(Array(text.utf8))
        defer { ConfigurationTestSupport.remove(path) }
        guard case let .failure(errors) = ConfigurationLoader.load(path: path, environment: [:]) else {
            Issue.record("oversize input loaded")
            return
        }
        #expect(errors.issues.count == 1)
        #expect(errors.issues[0].message.contains("larger than"))
        #expect(throws: YAMLError.self) { try YAMLParser(maximumInputSize: 10).parse("a: bcdefghijkl") }
    }

    @Test func moreThanOneDocumentIsAnError() {
        let issues = ConfigurationTestSupport.issues("log: {level: info}\n---\nlog: {level: debug}\n")
        #expect(issues.count == 1)
        #expect(issues.first?.message.contains("more than one") == true)
    }

    @Test func deepNestingIsBounded() {
        let yaml = "a: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(throws: YAMLError.self) { try parser.parse(yaml) }
    }

    @Test func emptyDocumentHasNoRoot() throws {
        #expect(try parser.parse("") == nil)
        #expect(try parser.parse("# only a comment\n") == nil)
    }
}

/// Merge keys and robustness against arbitrary input.
@Suite struct ConfigurationYAMLMergeTests {
    @Test func mergeKeysFillInWithoutOverriding() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            setup:
              bluetooth:
                services: ["FE2C"]
                names: ["Acme", "Acme Pro"]
            products:
              - name: Acme
                hardware: overEarHeadphone
                descriptor: &acme
                  bluetooth_service_uuid: "FE2C"
                  bluetooth_name_substring: "Acme"
              - name: Acme Pro
                hardware: overEarHeadphone
                descriptor:
                  <<: *acme
                  bluetooth_name_substring: "Acme Pro"
            """)
        #expect(configuration.products.map(\.product.descriptor.bluetoothNameSubstring) == ["Acme", "Acme Pro"])
        #expect(configuration.products.map(\.product.descriptor.bluetoothServiceUUID?.description) == ["FE2C", "FE2C"])
    }

    @Test("docs/configuration.md's anchor example loads; an anchor under a top-level key of its own is refused")
    func documentedAnchorPlacement() throws {
        let markdown = try String(contentsOfFile: ConfigurationTestSupport.repositoryFile("docs/configuration.md"), encoding: .utf8)
        let blocks = markdown.components(separatedBy: "```yaml\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let example = try #require(blocks.first { $0.contains("&acme") })
        let indent = example.prefix { $0 == " " }.count
        let yaml = example.split(separator: "\n").map { String($0.dropFirst(indent)) }.joined(separator: "\n")
        let configuration = try ConfigurationTestSupport.load(
            "setup:\n  bluetooth:\n    services: [\"FE2C\"]\n    names: [\"Acme\"]\n" + yaml + "\n")
        #expect(configuration.products.map(\.name) == ["Acme Studio Headphones", "Acme Travel Headphones"])
        #expect(configuration.products.map(\.product.hardware) == [.overEarHeadphone, .onEarHeadphone])
        #expect(configuration.products.map(\.product.descriptor.bluetoothServiceUUID?.description) == ["FE2C", "FE2C"])

        let holder = ConfigurationTestSupport.issues(
            "defaults: &d\n  hardware: overEarHeadphone\nproducts:\n  - <<: *d\n    name: Acme\n    descriptor: {bluetooth_service_uuid: \"FE2C\"}\n"
        )
        #expect(holder.map(\.path).contains("defaults"), "\(holder)")
    }

    @Test func mergeKeyOfAScalarIsAnError() {
        let issues = ConfigurationTestSupport.issues("log:\n  <<: 5\n")
        #expect(issues.map(\.path) == ["log.<<"])
    }

    @Test(arguments: ["config/aabridge.yaml", "config/examples/demo.yaml"])
    func everyTruncationOfTheShippedFileIsHandled(file: String) throws {
        let path = ConfigurationTestSupport.repositoryFile(file)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Every prefix, and every byte replaced by a troublesome one: an error or a configuration, never a crash.
        for end in stride(from: 0, through: bytes.count, by: 7) {
            _ = ConfigurationLoader.load(bytes: Array(bytes[..<end]), file: "cut", environment: [:], hostname: "h")
        }
        for index in stride(from: 0, to: bytes.count, by: 13) {
            for replacement: UInt8 in [0x3A, 0x2D, 0x26, 0x2A, 0x5B, 0x22, 0x09, 0xFF] {
                var mutated = bytes
                mutated[index] = replacement
                _ = ConfigurationLoader.load(bytes: mutated, file: "mutated", environment: [:], hostname: "h")
            }
        }
    }
}
