import Configuration
import Foundation
import JSON
import MQTT
import TestSupport
import Testing

@testable import Bridge

/// Keeps docs/mqtt-api.md honest: its `mosquitto_pub` examples are run as written, in document
/// order, with the real `mosquitto_pub`, against the demo's config/examples/demo.yaml (only the
/// broker and the database are the test's own, through `AABRIDGE_MQTT_SERVER` and
/// `AABRIDGE_STORAGE_PATH`), and what the bridge answers is compared with the page.
///
/// The page's format for a checked example: a ```` ```sh ```` block with `mosquitto_pub`
/// commands, directly followed by a plain ```` ``` ```` block of `topic payload` lines (`(empty)`
/// for an empty payload). Each line must arrive after the commands ran, in the documented
/// order per topic, with the same text once times are masked (an ISO 8601 time, or `"..."`,
/// matches any time); other messages in between are not compared. Every `mosquitto_sub` example
/// must see at least one message by the end of the run.
@Suite("docs/mqtt-api.md examples, run against the demo configuration", .serialized)
struct DocumentationExampleTests {
    struct Example {
        /// The line of the `sh` block in the page (1-based), for failure messages.
        var line: Int
        var commands: [[String]]
        var expected: [(topic: String, payload: String)]
    }

    struct Block {
        var info: String
        var lines: [String]
        var start: Int
        var end: Int
    }

    static let page = "docs/mqtt-api.md"

    static func blocks(_ markdown: String) -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if var block = open {
                    block.end = index + 1
                    blocks.append(block)
                    open = nil
                } else {
                    open = Block(info: String(trimmed.dropFirst(3)), lines: [], start: index + 1, end: index + 1)
                }
            } else if open != nil {
                open?.lines.append(String(line))
            }
        }
        return blocks
    }

    /// Every `sh` block with commands, with the plain block that directly follows it, if any.
    static func examples(_ markdown: String) -> [Example] {
        let blocks = blocks(markdown)
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        var examples: [Example] = []
        for (index, block) in blocks.enumerated() where block.info == "sh" {
            let commands = words(block.lines.joined(separator: "\n")).filter { $0.first == "mosquitto_pub" || $0.first == "mosquitto_sub" }
            guard !commands.isEmpty else { continue }
            var expected: [(String, String)] = []
            if index + 1 < blocks.count, blocks[index + 1].info.isEmpty,
                lines[block.end..<(blocks[index + 1].start - 1)].allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty })
            {
                for line in blocks[index + 1].lines where !line.isEmpty {
                    guard let space = line.firstIndex(of: " ") else {
                        expected.append((line, ""))
                        continue
                    }
                    let payload = String(line[line.index(after: space)...])
                    expected.append((String(line[..<space]), payload == "(empty)" ? "" : payload))
                }
            }
            examples.append(Example(line: block.start, commands: commands, expected: expected))
        }
        return examples
    }

    /// The commands of a shell snippet, as words: `\` line continuations, `'…'` and `"…"`
    /// quoting, and `#` comments, as far as the page uses them.
    static func words(_ script: String) -> [[String]] {
        var commands: [[String]] = []
        var current: [String] = []
        var word: String?
        var characters = Array(script)[...]
        func endWord() {
            if let finished = word { current.append(finished) }
            word = nil
        }
        func endCommand() {
            endWord()
            if !current.isEmpty { commands.append(current) }
            current = []
        }
        while let character = characters.popFirst() {
            switch character {
            case "\\":
                guard let next = characters.popFirst() else { break }
                if next != "\n" { word = (word ?? "") + String(next) }
            case "'":
                var text = word ?? ""
                while let next = characters.popFirst(), next != "'" { text.append(next) }
                word = text
            case "\"":
                var text = word ?? ""
                while let next = characters.popFirst(), next != "\"" {
                    if next == "\\", let escaped = characters.popFirst() { text.append(escaped) } else { text.append(next) }
                }
                word = text
            case "#" where word == nil:
                while let next = characters.first, next != "\n" { characters.removeFirst() }
            case "\n", ";": endCommand()
            case " ", "\t": endWord()
            default: word = (word ?? "") + String(character)
            }
        }
        endCommand()
        return commands
    }

    /// Times (and the page's `"..."` for a time) become one placeholder.
    static func mask(_ text: String) -> String {
        var masked = text.replacingOccurrences(
            of: #""\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z""#, with: #""<time>""#, options: .regularExpression)
        masked = masked.replacingOccurrences(of: #""...""#, with: #""<time>""#)
        return masked
    }

    /// MQTT filter matching (`+` one level, `#` the rest).
    static func matches(_ filter: String, _ topic: String) -> Bool {
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count else { return false }
            if level != "+" && level != topicLevels[index] { return false }
        }
        return filterLevels.count == topicLevels.count
    }

    static func option(_ name: String, in command: [String]) -> [String] {
        command.indices.dropLast().filter { command[$0] == name }.map { command[$0 + 1] }
    }

    @Test("the page's examples are in the checked format")
    func examplesAreFound() throws {
        let markdown = try String(contentsOfFile: Repository.file(Self.page), encoding: .utf8)
        let examples = Self.examples(markdown)
        let checked = examples.filter { !$0.expected.isEmpty }
        #expect(checked.count >= 12, "checked examples: \(checked.map(\.line))")
        for example in checked {
            for (topic, _) in example.expected {
                #expect(topic.hasPrefix("aabridge/"), "line \(example.line): \(topic)")
            }
        }
        #expect(Self.words("a 'b c' \\\n  d # e\nf \"g\\\"h\"") == [["a", "b c", "d"], ["f", "g\"h"]])
        #expect(Self.mask(#"{"at":"2026-11-29T12:19:20.163Z","b":"...","c":1}"#) == #"{"at":"<time>","b":"<time>","c":1}"#)
    }

    @Test("every mosquitto_pub example of docs/mqtt-api.md gets the documented answer from the demo configuration")
    func examplesAnswerAsDocumented() async throws {
        let markdown = try String(contentsOfFile: Repository.file(Self.page), encoding: .utf8)
        let examples = Self.examples(markdown)
        let broker = try MosquittoBroker()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("aabridge.sqlite3").path
        let environment = [
            "AABRIDGE_MQTT_SERVER": broker.url, "AABRIDGE_STORAGE_PATH": database, "AABRIDGE_LOG_LEVEL": "warning",
        ]
        let configuration = try ConfigurationLoader.load(
            path: Repository.file("config/examples/demo.yaml"), environment: environment, hostname: "docs"
        ).get()
        let observer = try await Observer(broker: broker, subscribe: ["aabridge/#", "homeassistant/#"])
        let runner = RuntimeRunner(configuration: configuration, databasePath: database)
        try await runner.start(observer: observer, clock: BridgeClock.now)

        var subscriptions: [(line: Int, filter: String)] = []
        for example in examples {
            let start = observer.messages.elements.count
            for command in example.commands {
                if command[0] == "mosquitto_sub" {
                    subscriptions += Self.option("-t", in: command).map { (example.line, $0) }
                    continue
                }
                let status = try Self.run(Array(command.dropFirst()) + ["-h", "127.0.0.1", "-p", "\(broker.port)"])
                #expect(status == 0, "\(Self.page):\(example.line): \(command.joined(separator: " ")) exited \(status)")
                // One command handled before the next is sent, as when typed by hand.
                try await Task.sleep(for: .milliseconds(150))
            }
            var after: [String: Int] = [:]
            for (topic, payload) in example.expected {
                let wanted = Self.mask(payload)
                let from = after[topic] ?? start
                let found = await observer.messages.wait(timeout: .seconds(5)) { elements in
                    elements.indices.dropFirst(from).contains {
                        elements[$0].topic == topic && Self.mask(elements[$0].payloadString) == wanted
                    }
                }
                let elements = observer.messages.elements
                if found,
                    let index = elements.indices.dropFirst(from).first(where: {
                        elements[$0].topic == topic && Self.mask(elements[$0].payloadString) == wanted
                    })
                {
                    after[topic] = index + 1
                } else {
                    let seen = elements.dropFirst(start).filter { $0.topic == topic }.map(\.payloadString)
                    Issue.record("\(Self.page):\(example.line): expected \(topic) \(payload)\n  got: \(seen)")
                }
            }
        }
        let topics = Set(observer.messages.elements.map(\.topic))
        for (line, filter) in subscriptions {
            #expect(topics.contains { Self.matches(filter, $0) }, "\(Self.page):\(line): nothing arrived on \(filter)")
        }
        #expect(await runner.stop() == 0)
        await observer.disconnect()
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
