import AccessoryKit
import JSON
import Testing

@testable import Bridge

/// `bridge/pairing/set` payloads (docs/mqtt-api.md, "Pairing form"): what fills the form in,
/// what clears it, what asks for Pair, and what is refused with `invalidRequest`.
@Suite("The pairing form's messages")
struct PairingFormTests {
    static func decode(_ text: String) -> PairingForm.Command { PairingForm.decode(Array(text.utf8)) }

    static func refusal(_ text: String) -> String? {
        guard case .failure(let error) = decode(text).decoded else { return nil }
        #expect(error.code == "invalidRequest", "\(text)")
        return error.message
    }

    @Test("a candidate and a name fill it in; null, \"\" and \"none\" clear the candidate, null or blank the name")
    func fills() throws {
        let address = try #require(BluetoothAddress("F1:E2:D3:C4:B5:A6"))
        #expect(
            Self.decode(#"{"candidate":"f1:e2:d3:c4:b5:a6","name":"  Kitchen AirPods ","transaction":7}"#).decoded
                == .success(.fill(candidate: .set(address), name: .set("Kitchen AirPods"))))
        for cleared in ["null", #""""#, #""none""#] {
            #expect(Self.decode(#"{"candidate":\#(cleared)}"#).decoded == .success(.fill(candidate: .clear, name: .keep)), "\(cleared)")
        }
        for cleared in ["null", #""   ""#] {
            #expect(Self.decode(#"{"name":\#(cleared)}"#).decoded == .success(.fill(candidate: .keep, name: .clear)), "\(cleared)")
        }
        #expect(Self.decode(#"{"name":"x","transaction":"t-1"}"#).transaction == "t-1", "the transaction is echoed")
    }

    @Test("\"action\":\"pair\" alone asks for Pair")
    func pair() {
        #expect(Self.decode(#"{"action":"pair"}"#).decoded == .success(.pair))
        #expect(Self.decode(#"{"action":"pair","transaction":1}"#).decoded == .success(.pair))
        #expect(Self.refusal(#"{"action":"pair","name":"x"}"#)?.contains("no other keys") == true)
        #expect(Self.refusal(#"{"action":"select"}"#)?.contains("'action'") == true)
    }

    @Test("refused with invalidRequest: not JSON, not an object, unknown or no keys, a bad address, a name over 128")
    func refusals() {
        #expect(Self.refusal("not json")?.contains("not JSON") == true)
        #expect(Self.refusal(#"["candidate"]"#)?.contains("JSON object") == true)
        #expect(Self.refusal(#"{}"#) != nil)
        #expect(Self.refusal(#"{"transaction":1}"#) != nil, "a transaction alone says nothing")
        #expect(Self.refusal(#"{"candidate":"F1:E2:D3:C4:B5:A6","colour":"red"}"#) != nil)
        #expect(Self.refusal(#"{"candidate":"not-an-address"}"#)?.contains("candidate") == true)
        #expect(Self.refusal(#"{"name":"\#(String(repeating: "n", count: 129))"}"#)?.contains("128") == true)
        #expect(Self.refusal(#"{"name":"\#(String(repeating: "n", count: 128))"}"#) == nil, "128 characters is the limit, not over it")
    }

    @Test("Pair sends picker/select with the form's candidate and name, each left out when not filled in")
    func selectRequest() throws {
        let address = try #require(BluetoothAddress("F1:E2:D3:C4:B5:A6"))
        let full = PairingForm(candidate: address, name: "Den").selectRequest(transaction: "ha")
        #expect(full.name == "picker/select")
        #expect(full.transaction == "ha")
        guard case .success = full.decoded else {
            Issue.record("the form's select should decode: \(full.decoded)")
            return
        }
        let empty = PairingForm().selectRequest(transaction: nil)
        guard case .failure(let error) = empty.decoded else {
            Issue.record("an empty form's select must be refused by the request API")
            return
        }
        #expect(error.message.contains("'id'"), "picker/select's own refusal: \(error.message)")
    }
}
