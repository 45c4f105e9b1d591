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
}
