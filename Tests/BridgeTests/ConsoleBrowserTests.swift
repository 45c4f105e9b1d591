import Foundation
import JSON
import LocalProcess
import TestSupport
import Testing

@testable import Bridge

/// The console in a real browser: Debian's headless Chromium, driven by
/// chromedriver through python3-selenium (Tests/Browser/console.py). Runs wherever they are
/// installed, and always in CI (`CI=true`), where a missing browser fails the test.
@Suite("Console in Chromium")
struct ConsoleBrowserTests {
    /// Where the screenshots stay after the run (CI keeps .build/artefacts).
    static let artefacts = Repository.file(".build/artefacts/console")
    /// Acme headphones (confirmAuthorization) heard through gateway gw2, as PickerFlowTests has them.
    static let confirmTopic = "home/gw2/BTtoMQTT/D0C3D2A1B2C3"
    static let confirmPayload =
        #"{"id":"D0:C3:D2:A1:B2:C3","name":"Acme Studio 2","rssi":-58,"servicedatauuid":"fe2c","servicedata":"00aabbcc"}"#
    static let confirmID = "D0:C3:D2:A1:B2:C3"
    static let irk = "ec0234a357c8ad05341010a60a397d9b"

    @Test(
        """
        Load the console, pair an accessory from a simulated advertisement, see its placement, rename it, remove it; \
        pair one that needs authorization, authorize it, enter its IRK, which the page never shows; \
        opened as 127.0.0.1 and as localhost (the names a console without a token serves)
        """,
        .enabled(if: Browser.testsEnabled, "needs chromium, chromium-driver and python3-selenium (scripts/install-deps)"), .serialized,
        arguments: ["127.0.0.1", "localhost"])
    func pairRenameRemove(host: String) async throws {
        let artefacts = Self.artefacts + (host == "127.0.0.1" ? "" : "-\(host)")
        try? FileManager.default.removeItem(atPath: artefacts)
        try await withConsole { harness, observer, port in
            let printed = try await Browser.run(
                script: String(contentsOfFile: Repository.file("Tests/Browser/console.py"), encoding: .utf8),
                arguments: [
                    "http://\(host):\(port)/", String(harness.broker.port), artefacts, Fixture.advertisementTopic,
                    Fixture.advertisementPayload, Fixture.advertisementID, Self.confirmTopic, Self.confirmPayload, Self.confirmID,
                    "Acme Studio Headphones", Self.irk,
                ])
            let summary = try JSONParser.parse(String(printed.split(separator: "\n").last ?? ""))
            #expect(summary["accessories_at_start"] == 3)
            #expect(summary["candidate"]?.stringValue?.contains("AirPods Pro") == true)
            #expect(summary["paired_name"] == "Kitchen AirPods")
            #expect(["inEar", "inCase", "onHead", "offHead", "notInEar"].contains(summary["placement"]?.stringValue ?? ""), "\(summary)")
            #expect(summary["renamed"] == "Den AirPods")
            #expect(summary["remove_asks"] == "Really remove?")
            #expect(summary["accessories_at_end"] == 3)
            #expect(summary["before_authorize"]?.stringValue?.hasPrefix("awaitingAuthorization") == true, "\(summary)")
            #expect(summary["after_authorize"]?.stringValue?.hasPrefix("authorized") == true, "\(summary)")
            #expect(summary["keys"] == "IRK set, key not set")
            #expect(summary["irk_in_page"] == false, "the page never shows a key")

            // What the page did went through the request API: MQTT saw each step.
            let topic = "aabridge/accessory/F1E2D3C4B5A6"
            #expect(observer.json(on: topic).contains { $0["name"] == "Kitchen AirPods" && $0["placement"]?.stringValue != nil })
            #expect(observer.json(on: topic).contains { $0["name"] == "Den AirPods" })
            #expect(observer.messages(on: topic).last?.payload.isEmpty == true, "removed: its retained state cleared")
            #expect(observer.eventTypes.contains("accessoryAdded"))
            #expect(observer.eventTypes.contains("accessoryRemoved"))

            // The key reached the bridge (the request API says only whether it is set).
            #expect(observer.json(on: "aabridge/accessory/D0C3D2A1B2C3").last?["keys"]?["irk"] == true)
            for name in [
                "01-loaded", "02-candidate", "03-paired", "04-renamed", "05-removed", "06-awaiting-authorization", "07-authorized-keys",
            ] {
                let data = FileManager.default.contents(atPath: "\(artefacts)/\(name).png") ?? Data()
                #expect(Array(data.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "\(name).png is a PNG")
                #expect(data.count > 10_000, "\(name).png has content")
            }
        }
    }
}
