import Testing
@testable import Bridge

/// The payload serializer and the strict request parser.
@Suite("JSON values")
struct JSONValueTests {
    @Test("strings are escaped exactly where JSON requires it", arguments: [
        ("plain Alice's AirPods", #""plain Alice's AirPods""#),
        ("quote \" and backslash \\", #""quote \" and backslash \\""#),
        ("line\nbreak\ttab\r", #""line\nbreak\ttab\r""#),
        ("control \u{01}", #""control \u0001""#),
        ("separator \u{2028} and \u{2029}", #""separator \u2028 and \u2029""#),
        ("non-ASCII ü € 🎧", "\"non-ASCII ü € 🎧\""),
        ("a/b+#", #""a/b+#""#),
    ])
    func escaping(text: String, expected: String) throws {
        let serialized = JSONValue.string(text).serialized
        #expect(serialized == expected)
        #expect(try JSONParser.parse(serialized) == .string(text), "round trip")
    }

    @Test("objects keep their key order; numbers and literals as JSON writes them")
    func objects() {
        let value: JSONValue = ["b": 1, "a": [true, nil, .double(1.5)], "c": .object([])]
        #expect(value.serialized == #"{"b":1,"a":[true,null,1.5],"c":{}}"#)
    }

    @Test("the parser refuses what is not strict JSON", arguments: [
        "", "{", "{\"a\":1,}", "[1 2]", "{\"a\":01}", "\"\u{01}\"", "nul", "{\"a\":1} x",
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func refuses(text: String) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
    }

    @Test("invalid UTF-8 and lone surrogates are refused")
    func invalidText() throws {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(#""\ud800""#) }
        #expect(try JSONParser.parse(#""\ud83c\udfa7""#) == .string("🎧"))
    }
}
