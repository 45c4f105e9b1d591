import Testing
@testable import Bridge

@Test func moduleLinks() {
    #expect(String(describing: BridgeModule.self) == "BridgeModule")
}
