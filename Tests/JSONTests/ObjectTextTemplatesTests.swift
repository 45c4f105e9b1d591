import Testing

@testable import JSON

/// The Publisher keeps every published state object through these: what comes back must be
/// the text given, byte for byte, whatever it is.
@Suite("Object texts without their keys")
struct ObjectTextTemplatesTests {
    static let state: JSONValue = [
        "id": "A1:B2:C3:D4:E5:F6", "name": #"Alice's "Pro" \ AirPods"#, "product": "AirPods Pro", "state": "registered",
        "capabilities": ["automaticEarDetection"], "placement": nil, "worn": true, "routes": [], "rssi": -61,
        "battery": ["left": 80, "right": 75, "charging": false], "last_seen": "2026-12-04T00:20:55.123Z",
        "last_error": ["code": "x", "message": "a } b ] c , d \" e"], "ratio": .double(-1.5), "home_sources": ["A", "B,}"],
    ]

    @Test("a state object comes back byte for byte, its keys stored once for every text of its shape")
    func stateObject() {
        var templates = ObjectTextTemplates()
        let text = Self.state.bytes
        let compacted = templates.compact(text)
        #expect(templates.text(compacted) == text)
        #expect(templates.count(compacted) == text.count)
        #expect(compacted.count == 1 + 14, "the template's number, and each of the 14 values as the reference")
        guard case .object(var pairs) = Self.state else { return }
        pairs[1].1 = .string(String(repeating: "n", count: 20_000)) // a length of three bytes
        pairs[8].1 = .int(-1)
        let other = JSONValue.object(pairs).bytes
        let otherCompacted = templates.compact(other)
        #expect(templates.text(otherCompacted) == other)
        #expect(templates.count(otherCompacted) == other.count)
        #expect(templates.templateCount == 1)
        #expect(otherCompacted.count == 1 + 12 + (3 + 20_002) + (1 + 2), "two values differ from the reference: their lengths and bytes")
        var list: [UInt8] = []
        templates.append(compacted, to: &list)
        templates.append(otherCompacted, to: &list)
        #expect(list == text + other)
        #expect(templates.text(compacted) == text, "the first text is unchanged by the second")
    }

    @Test(
        "anything that is not a compact object is kept whole, and comes back as given",
        arguments: [
            "", "{}", "[]", "[1,2]", "null", "\"a\"", "{\"a\":1", "{\"a\":1}x", "{ \"a\":1}", "{\"a\" :1}", "{\"a\":1 }",
            "{\"a\":}", "{\"a\":1,}", "{\"a\":\"unterminated}", "{\"a\":[1,{\"b\":2}}", "{\"a\":1,\"b\"}", "{1:2}",
        ])
    func notCompactObjects(text: String) {
        var templates = ObjectTextTemplates()
        let bytes = Array(text.utf8)
        let compacted = templates.compact(bytes)
        #expect(templates.text(compacted) == bytes)
        #expect(templates.count(compacted) == bytes.count)
    }

    @Test("a text whose keys differ from a template's gets a template of its own, up to the maximum; beyond it, kept whole")
    func templatesUpToTheMaximum() {
        var templates = ObjectTextTemplates()
        var stored: [([UInt8], [UInt8])] = []
        for number in 0..<(ObjectTextTemplates.maximumTemplates + 4) {
            for value in 0..<3 {
                let text: JSONValue = .object([("k\(number)", .int(value)), ("same", "v"), ("n\(value % 2)", [.bool(true)])])
                let bytes = text.bytes
                stored.append((bytes, templates.compact(bytes)))
            }
        }
        #expect(templates.templateCount == ObjectTextTemplates.maximumTemplates)
        for (text, compacted) in stored {
            #expect(templates.text(compacted) == text)
        }
        #expect(stored.last.map { $0.1.first == 0 } == true, "the last ones are kept whole")
    }

    @Test("random objects come back byte for byte")
    func randomObjects() {
        var generator = SystemRandomNumberGenerator()
        var templates = ObjectTextTemplates()
        var stored: [([UInt8], [UInt8])] = []
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .int(Int.random(in: -1_000_000...1_000_000, using: &generator))
            case 3: return .double(Double.random(in: -1e6...1e6, using: &generator))
            case 4:
                let alphabet = Array("ab\"\\,:{}[]\n\u{1} é€🎧")
                return .string(String((0..<Int.random(in: 0...200, using: &generator)).map { _ in alphabet.randomElement()! }))
            case 5: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in value(depth + 1) })
            default:
                return .object((0..<Int.random(in: 0...4, using: &generator)).map { ("k\($0)", value(depth + 1)) })
            }
        }
        for _ in 0..<500 {
            let keys = ["id", "name", "a\"b", "c\\"].prefix(Int.random(in: 1...4, using: &generator))
            let text = JSONValue.object(keys.map { ($0, value(0)) }).bytes
            stored.append((text, templates.compact(text)))
        }
        for (text, compacted) in stored {
            #expect(templates.text(compacted) == text)
            #expect(templates.count(compacted) == text.count)
        }
    }
}
