import Testing
@testable import Telemetry

@Test func moduleLinks() {
    #expect(String(describing: TelemetryModule.self) == "TelemetryModule")
}
