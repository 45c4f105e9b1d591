import Testing

@testable import AccessoryKit

/// identity.md, Keys: both forms users hold, and secrecy.
@Suite("Accessory keys")
struct AccessoryKeyTests {
    /// The Core Specification's sample IRK (Vol 3 Part H, D.7), most significant byte first.
    static let sample: [UInt8] = [
        0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B,
    ]
    /// The same key as the macOS Keychain shows it: base64 of the bytes, least significant first
    /// (`base64.b64encode(bytes.fromhex("ec02…7d9b")[::-1])`).
    static let keychainForm = "m305CqYQEDQFrchXozQC7A=="

    @Test(
        "32 hex digits, with or without separators and the irk: prefix, are most significant byte first",
        arguments: [
            "ec0234a357c8ad05341010a60a397d9b", "EC0234A357C8AD05341010A60A397D9B",
            "ec:02:34:a3:57:c8:ad:05:34:10:10:a6:0a:39:7d:9b", "ec-02-34-a3-57-c8-ad-05-34-10-10-a6-0a-39-7d-9b",
            "ec 02 34 a3 57 c8 ad 05 34 10 10 a6 0a 39 7d 9b", "irk:ec0234a357c8ad05341010a60a397d9b",
            "  ec0234a357c8ad05341010a60a397d9b\n",
        ])
    func hexForms(text: String) throws {
        #expect(try AccessoryKey.parse(text).get().bytes == Self.sample)
    }

    @Test("base64 (the Keychain's and Home Assistant's form) is reversed; padding and irk: are optional")
    func base64Forms() throws {
        for text in [Self.keychainForm, "m305CqYQEDQFrchXozQC7A", "irk:" + Self.keychainForm] {
            #expect(try AccessoryKey.parse(text).get().bytes == Self.sample, "\(text)")
        }
    }

    @Test(
        "anything else is refused with a reason that does not repeat the text",
        arguments: [
            ("ec0234a357c8ad05341010a60a397d", AccessoryKey.FormatError.wrongLength(15)),
            ("ec0234a357c8ad05341010a60a397d9b00", .wrongLength(17)),
            ("AAAA", .wrongLength(2)),
            ("QUJD", .wrongLength(3)),
            ("not a key!", .unrecognised),
            ("", .unrecognised),
            ("m305CqYQEDQFrchXozQC7A=x", .unrecognised),
            ("ec0234a357c8ad05341010a60a397d9", .unrecognised),
        ])
    func refused(text: String, error: AccessoryKey.FormatError) {
        guard case .failure(let actual) = AccessoryKey.parse(text) else {
            Issue.record("'\(text)' was accepted")
            return
        }
        #expect(actual == error)
        #expect(!text.isEmpty ? !actual.description.contains(text) : true)
    }

    @Test("a key's description, debug description and mirror never show its bytes")
    func redacted() throws {
        let key = try #require(AccessoryKey(bytes: Self.sample))
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.lowercased().contains("ec02"), "\(text)")
            #expect(!text.contains("236"), "\(text)") // 0xEC in decimal
        }
        #expect(key.hexDigits == "ec0234a357c8ad05341010a60a397d9b")
    }
}
