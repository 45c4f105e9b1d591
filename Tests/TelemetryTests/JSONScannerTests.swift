import Testing

@testable import Telemetry

@Suite struct JSONScannerTests {
    /// Scans `text` as an object and returns its members as (key, rendered value) pairs.
    static func members(_ text: String) throws -> [(String, String)] {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { buffer in
            let scanner = JSONScanner(buffer)
            var result: [(String, String)] = []
            try scanner.forEachMember { key, value in
                let rendered: String
                switch value {
                case .string(let ref): rendered = "s:" + scanner.string(ref)
                case .number(let number): rendered = "n:\(number)"
                case .bool(let flag): rendered = "b:\(flag)"
                case .null: rendered = "null"
                case .array(let range):
                    var elements: [String] = []
                    scanner.forEachElement(ofArray: range) { element in
                        if case .string(let ref) = element { elements.append(scanner.string(ref)) } else { elements.append("?") }
                    }
                    rendered = "a:" + elements.joined(separator: ",")
                case .object(let range):
                    var keys: [String] = []
                    scanner.forEachMember(ofObject: range) { key, _ in keys.append(scanner.string(key)) }
                    rendered = "o:" + keys.joined(separator: ",")
                }
                result.append((scanner.string(key), rendered))
            }
            return result
        }
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { (try? JSONScanner($0).forEachMember { _, _ in }) != nil }
    }

    @Test func flatObjectWithEveryValueKind() throws {
        let result = try Self.members(
            #" { "a" : "x", "b":-12.5e1,"c":true,"d":false,"e":null,"f":["1","2"],"g":{"h":{"i":[1,{}]}},"j":0} "#)
        #expect(result.map(\.0) == ["a", "b", "c", "d", "e", "f", "g", "j"])
        #expect(result.map(\.1) == ["s:x", "n:-125.0", "b:true", "b:false", "null", "a:1,2", "o:h", "n:0.0"])
    }

    @Test func numbers() throws {
        let result = try Self.members(#"{"a":-84.77,"b":1E2,"c":0.001,"d":-0,"f":2.5e-3}"#)
        #expect(result.map(\.1) == ["n:-84.77", "n:100.0", "n:0.001", "n:-0.0", "n:0.0025"])
        // Beyond 19 significant digits the value is close but not correctly rounded (documented).
        let long = try Self.members(#"{"e":123456789012345678901234,"h":1e-400}"#)
        #expect(long[0].1.hasPrefix("n:1.23456789012345"))
        #expect(long[1].1 == "n:0.0")
        // Beyond Double's range: rejected (fuzz finding, to agree with JSONSerialization).
        #expect(!Self.isValid(Array(#"{"g":1e400}"#.utf8)))
        #expect(!Self.isValid(Array(#"{"d":21e00000000000080000000000}"#.utf8)))
    }

    @Test func escapesAndSurrogatePairs() throws {
        let result = try Self.members(#"{"k\u0065y":"a\"b\\c\/d\b\f\n\r\t","e":"\u00e9\u20AC","s":"\ud83c\udfa7","raw":"Café 🎧"}"#)
        #expect(result[0].0 == "key")
        #expect(result[0].1 == "s:a\"b\\c/d\u{8}\u{C}\n\r\t")
        #expect(result[1].1 == "s:é€")
        #expect(result[2].1 == "s:🎧")
        #expect(result[3].1 == "s:Café 🎧")
    }

    @Test(arguments: [
        "", " ", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{a:1}", "{'a':1}",
        "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":nul}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud83c\"}", "{\"a\":\"\\udfa7\"}", "{\"a\":\"\\ud83c\\u0041\"}",
        "{\"a\":\"unterminated}", "{\"a\":[1,2}", "{\"a\":{\"b\":1]}", "{\"a\":1}x", "{\"a\":1}{}", "{\"a\":[1,]}",
    ])
    func rejectsInvalidStructure(_ text: String) {
        #expect(!Self.isValid(Array(text.utf8)))
    }

    @Test func rejectsControlCharactersAndInvalidUTF8() {
        #expect(!Self.isValid(Array("{\"a\":\"x\ny\"}".utf8)))
        let prefix = Array("{\"a\":\"".utf8), suffix = Array("\"}".utf8)
        for bad: [UInt8] in [
            [0xFF], [0xC0, 0x80], [0xC3], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xF0, 0x9F, 0x8E],
        ] {
            #expect(!Self.isValid(prefix + bad + suffix), "accepted \(bad)")
        }
        #expect(Self.isValid(prefix + [0xC3, 0xA9, 0xF0, 0x9F, 0x8E, 0xA7, 0xEF, 0xBF, 0xBD] + suffix))
    }

    /// Strings are scanned eight bytes at a time while no byte needs a look: a byte that does,
    /// at any offset of a block or of the tail, is still found and judged as it was byte by byte.
    @Test func everyOffsetOfAByteThatNeedsALook() throws {
        let cases: [(insert: [UInt8], valid: Bool, decoded: [UInt8]?)] = [
            (Array(#"\""#.utf8), true, [0x22]), (Array(#"\\"#.utf8), true, [0x5C]), (Array(#"\n"#.utf8), true, [0x0A]),
            (Array(#"\u00e9"#.utf8), true, [0xC3, 0xA9]), ([0xC3, 0xA9], true, [0xC3, 0xA9]), ([0x7F], true, [0x7F]),
            ([0x20], true, [0x20]), ([0x01], false, nil), ([0x1F], false, nil), ([0xFF], false, nil), ([0x80], false, nil),
            ([0xC3], false, nil),
        ]
        for length in 0..<24 {
            for offset in 0...length {
                for (insert, valid, decoded) in cases {
                    let before = [UInt8](repeating: UInt8(ascii: "a"), count: offset)
                    let after = [UInt8](repeating: UInt8(ascii: "b"), count: length - offset)
                    let text = Array(#"{"k":""#.utf8) + before + insert + after + Array(#"","n":1}"#.utf8)
                    #expect(Self.isValid(text) == valid, "\(insert) at \(offset) of \(length)")
                    guard valid, let decoded else { continue }
                    let members = try Self.members(String(decoding: text, as: UTF8.self))
                    #expect(members.map(\.0) == ["k", "n"])
                    #expect(members.first?.1 == "s:" + String(decoding: before + decoded + after, as: UTF8.self))
                }
            }
        }
        // A closing quote at every offset ends the string there: what follows is the next member.
        for offset in 0..<20 {
            let value = String(repeating: "0123456789abcdef", count: 2).prefix(offset)
            #expect(try Self.members(#"{"m":"\#(value)","x":true}"#).map(\.1) == ["s:\(value)", "b:true"])
        }
    }

    @Test func limitsNestingDepth() {
        let deep = { (depth: Int) in "{\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}" }
        #expect(Self.isValid(Array(deep(TelemetryLimits.maximumJSONDepth).utf8)))
        #expect(!Self.isValid(Array(deep(TelemetryLimits.maximumJSONDepth + 1).utf8)))
        // Deep enough to overflow the stack of a recursive parser without a limit.
        #expect(!Self.isValid(Array(deep(100_000).utf8)))
    }

    @Test func topLevelMustBeAnObject() {
        #expect(!Self.isValid(Array("[1]".utf8)))
        #expect(!Self.isValid(Array("\"online\"".utf8)))
        #expect(Self.isValid(Array("{}".utf8)))
    }
}
