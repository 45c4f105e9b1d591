import Testing

@testable import AccessoryKit

/// What one accessory costs the engine, held to the sizes issue 53 brought them to: a field
/// added in the wrong place, or a descriptor inline again, shows here before in the benchmark.
@Suite("Footprint: the engine's per-accessory layouts")
struct FootprintLayoutTests {
    @Test("a record is at most 424 bytes (its one-byte fields in the padding of its optionals)")
    func recordLayout() {
        #expect(MemoryLayout<BridgeEngine.Record>.stride <= 424, "\(MemoryLayout<BridgeEngine.Record>.stride)")
    }

    @Test("an accessory holds its descriptor by reference: at most 96 bytes")
    func accessoryLayout() {
        #expect(MemoryLayout<DiscoveryDescriptor>.stride == 8)
        #expect(MemoryLayout<Accessory>.stride <= 96, "\(MemoryLayout<Accessory>.stride)")
    }

    @Test("descriptors are values: a change to a copy leaves the original; equal fields are equal, hash alike")
    func descriptorValueSemantics() {
        let original = DiscoveryDescriptor(
            bluetoothCompanyIdentifier: 0x004C, bluetoothNameSubstring: "AirPods", bluetoothManufacturerDataBlob: [0x07, 0x19],
            bluetoothManufacturerDataMask: [0xFF, 0xFF], supportedOptions: .bluetoothPairingLE)
        var copy = original
        #expect(copy == original)
        copy.bluetoothNameSubstring = "Beats"
        copy.bluetoothRange = .immediate
        #expect(original.bluetoothNameSubstring == "AirPods")
        #expect(original.bluetoothRange == .default)
        #expect(copy.bluetoothNameSubstring == "Beats")
        #expect(copy.bluetoothCompanyIdentifier == 0x004C && copy.bluetoothManufacturerDataBlob == [0x07, 0x19])
        #expect(copy != original)
        copy.bluetoothNameSubstring = "AirPods"
        copy.bluetoothRange = .default
        #expect(copy == original, "equal fields, storages of their own")
        #expect(copy.hashValue == original.hashValue)
        #expect(Set([copy, original]).count == 1)
        var other = DiscoveryDescriptor()
        #expect(other != original && !other.usesBluetooth && !other.usesWiFi)
        other.ssidPrefix = "Speaker-"
        #expect(other.usesWiFi && other.ssidPrefix == "Speaker-" && other.ssid == nil)
    }
}
