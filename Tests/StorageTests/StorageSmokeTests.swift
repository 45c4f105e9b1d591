import Testing
@testable import Storage

@Test func moduleLinks() {
    #expect(String(describing: StorageModule.self) == "StorageModule")
}
