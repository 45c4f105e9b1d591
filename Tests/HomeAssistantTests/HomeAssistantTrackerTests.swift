import AccessoryKit
import Testing

@testable import HomeAssistant

private typealias F = HomeAssistantFixtures

@Suite struct HomeAssistantTrackerTests {
    @Test func publishesOnlyWhenDiscoveryChanges() throws {
        var tracker = HomeAssistantDiscoveryTracker(discovery: F.discovery)
        let firstMessage = tracker.changed(F.fullStatus)
        let first = try #require(firstMessage)
        #expect(first.topic == "homeassistant/device/aabridge_A1B2C3D4E5F6/config")
        #expect(first.payload == F.discovery.accessoryDevice(F.fullStatus).payload)

        var status = F.fullStatus
        status.rssi = -80
        status.registration?.configuration.devicePlacement = .offHead
        status.worn = false
        #expect(tracker.changed(status) == nil)

        status.accessory.displayName = "Renamed"
        let renamedMessage = tracker.changed(status)
        let renamed = try #require(renamedMessage)
        #expect(renamed.payload["device"]?["name"] == "Renamed")
        #expect(tracker.changed(status) == nil)
    }

    @Test func batterySensorsAreSticky() throws {
        var tracker = HomeAssistantDiscoveryTracker(discovery: F.discovery)
        var status = F.switchingOnlyStatus
        status.battery = nil
        let noneMessage = tracker.changed(status)
        let none = try #require(noneMessage)
        #expect(!F.componentIDs(none.payload).contains("battery"))
        status.battery = Battery(main: 40)
        let someMessage = tracker.changed(status)
        let some = try #require(someMessage)
        #expect(F.componentIDs(some.payload).contains("battery"))
        // An advertisement without battery data keeps the entity: nothing to republish.
        status.battery = nil
        #expect(tracker.changed(status) == nil)
        let all = tracker.everything([status])
        #expect(F.componentIDs(all[1].payload).contains("battery"))
    }

    @Test func everythingRepublishesAndRemovalForgets() throws {
        var tracker = HomeAssistantDiscoveryTracker(discovery: F.discovery)
        let all = tracker.everything(F.allStatuses)
        #expect(all.map(\.topic) == F.discovery.allDevices(F.allStatuses).map(\.topic))
        #expect(all[0].topic == F.discovery.bridgeDevice().topic)
        #expect(HomeAssistantRules(discoveryPrefix: "homeassistant").validate(all).isEmpty)
        for status in F.allStatuses { #expect(tracker.changed(status) == nil) }

        #expect(tracker.removed(F.budsID) == "homeassistant/device/aabridge_A1B2C3D4E5F6/config")
        // Added again later (paired anew): discovery is published again.
        #expect(tracker.changed(F.fullStatus) != nil)
    }

    /// The tracker keeps a digest of what was published, not the key: every part of what Home
    /// Assistant shows must still count, and a change back to an earlier key is published too.
    @Test func everyPartOfTheDiscoveryCountsAndAChangeBackIsPublished() throws {
        var tracker = HomeAssistantDiscoveryTracker(discovery: F.discovery)
        var status = F.fullStatus
        #expect(tracker.changed(status) != nil)
        var changes: [(String, (inout AccessoryStatus) -> Void)] = [
            ("name", { $0.accessory.displayName = "Den AirPods" }),
            ("model", { $0.model = "AirPods 4" }),
            ("home source", { $0.homeSources = [BluetoothAddress("11:22:33:44:55:99")!] }),
            ("capabilities", { $0.registration?.configuration.deviceCapabilities = [] }),
        ]
        changes.append(("battery part", { $0.battery = Battery(main: 10, chargingCase: 50) }))
        for (what, change) in changes {
            let before = status
            change(&status)
            #expect(tracker.changed(status) != nil, "\(what) changed")
            #expect(tracker.changed(status) == nil, "\(what) unchanged")
            if what == "battery part" { continue } // sticky: a part seen keeps its entity
            #expect(tracker.changed(before) != nil, "\(what) changed back")
            #expect(tracker.changed(status) != nil, "\(what) changed again")
        }
        #expect(tracker.lookalikesChanged([F.budsID: [F.phone]], statuses: [status]).count == 1)
        #expect(tracker.lookalikesChanged([F.budsID: [F.phone]], statuses: [status]).isEmpty)
        #expect(tracker.changed(status) == nil)
    }
}
