import AccessoryKit
import Testing

@testable import Bridge

/// What `aabridge_requests_total` counts a request under: its own name when it is one of the
/// API's (``RequestName``) or a form's (``FormName``), `other` for anything a client invents.
@Suite("Diagnostics: request names")
struct DiagnosticsTests {
    @Test("every request and form is counted under its own name; an invented one as other")
    func requestNames() {
        let diagnostics = Diagnostics(logger: BridgeLogger(minimum: .error))
        let names = RequestName.allCases.map(\.name) + FormName.allCases.map(\.name)
        for name in names { diagnostics.countRequest(name, Result<Int, ResponseError>.success(1), overHTTP: false) }
        diagnostics.countRequest("no/such/request", Result<Int, ResponseError>.success(1), overHTTP: false)
        let counted = Dictionary(diagnostics.counters.requests.map { ($0.key.name, $0.value) }, uniquingKeysWith: +)
        for name in names { #expect(counted[name] == 1, "\(name)") }
        #expect(counted["reattach/set"] == 1, "the re-attach form's press")
        #expect(counted["other"] == 1)
        #expect(counted.count == names.count + 1)
    }
}
