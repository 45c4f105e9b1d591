import Testing

@testable import JSON

/// The payload serializer and the strict request parser.
@Suite("JSON values")
struct JSONValueTests {
    @Test(
        "strings are escaped exactly where JSON requires it",
        arguments: [
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

    @Test(
        "the parser refuses what is not strict JSON",
        arguments: [
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

    @Test("a repeated key: the last value wins, at the later position")
    func repeatedKeys() throws {
        let value = try JSONParser.parse(#"{"a":1,"b":2,"a":3,"c":{"x":1,"x":2},"b":4}"#)
        #expect(value.serialized == #"{"a":3,"c":{"x":2},"b":4}"#)
    }

    @Test("an object of 50,000 keys parses in linear time")
    func manyKeys() throws {
        let count = 50_000
        var text = "{"
        for index in 0..<count {
            if index > 0 { text += "," }
            text += "\"k\(index)\":\(index)"
        }
        // Every key once more at the end: each is a repeat that must replace the first.
        for index in 0..<count { text += ",\"k\(index)\":\(-index)" }
        text += "}"
        let bytes = Array(text.utf8)
        let value = try JSONParser.parse(bytes, maximumSize: bytes.count)
        guard case .object(let pairs) = value else {
            Issue.record("not an object")
            return
        }
        #expect(pairs.count == count)
        #expect(pairs.first?.0 == "k0" && pairs.first?.1 == 0)
        #expect(pairs.last?.0 == "k\(count - 1)" && pairs.last?.1 == .int(1 - count))
        #expect(value["k1234"] == -1234)
    }

    @Test("payloads above the size limit are refused unless the caller allows more")
    func sizeLimit() throws {
        let text = "[" + String(repeating: "0,", count: JSONParser.maximumSize / 2) + "0]"
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
        #expect(try JSONParser.parse(Array(text.utf8), maximumSize: text.utf8.count).arrayValue?.count == JSONParser.maximumSize / 2 + 1)
    }
}
