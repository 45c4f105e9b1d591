import Testing
@testable import AccessoryKit

@Test func moduleLinks() {
    #expect(String(describing: AccessoryKitModule.self) == "AccessoryKitModule")
}
