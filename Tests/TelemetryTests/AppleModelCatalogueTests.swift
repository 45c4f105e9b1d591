import AccessoryKit
import Testing

@testable import Telemetry

/// The model catalogue and what `apple_proximity` makes of each family (identity.md, Models).
@Suite("Apple model catalogue: names, hardware types and placement per family")
struct AppleModelCatalogueTests {
    /// A proximity-pairing advertisement of `model` with the given status byte; battery
    /// nibbles 0x85 (broadcasting bud 50 %, other 80 %), case 60 %.
    static func advertisement(model: UInt16, status: UInt8) -> Advertisement {
        let payload: [UInt8] =
            [0x07, 0x19, 0x01, UInt8(model & 0xFF), UInt8(model >> 8), status, 0x85, 0x06, 0x00, 0x00, 0x00]
            + [UInt8](repeating: 0, count: 16)
        var advertisement = Advertisement(gateway: "gw", address: BluetoothAddress(rawValue: 1), receivedAt: 0)
        advertisement.manufacturerData = [ManufacturerData(companyIdentifier: 0x004C, payload: payload)]
        return advertisement
    }

    static func decode(model: UInt16, status: UInt8, product: HardwareType = .inEarBud) -> AdvertisementSighting.Decoded? {
        PlacementDecoder.appleProximity.decode(advertisement(model: model, status: status), hardware: product)
    }

    @Test("identifiers are unique, names are set, and the families are typed as identity.md says")
    func catalogue() {
        let models = AppleModelCatalogue.models
        #expect(Set(models.map(\.id)).count == models.count)
        #expect(models.allSatisfy { !$0.name.isEmpty && $0.id & 0xFF00 == 0x2000 })
        func hardware(_ name: String) -> HardwareType? { models.first { $0.name == name }?.hardware }
        #expect(hardware("AirPods Pro") == .inEarBud)
        #expect(hardware("AirPods 4") == .inEarBud)
        #expect(hardware("Powerbeats Pro") == .inEarBud)
        #expect(hardware("Beats Fit Pro") == .inEarBud)
        #expect(hardware("Beats Studio Buds") == .inEarBud)
        #expect(hardware("AirPods Max") == .overEarHeadphone)
        #expect(hardware("Beats Studio Pro") == .overEarHeadphone)
        #expect(hardware("Beats Solo 4") == .onEarHeadphone)
        // Every quirk names where it came from.
        #expect(models.flatMap(\.quirks).allSatisfy { !$0.source.isEmpty && !$0.note.isEmpty })
    }

    @Test("head-tracked spatial audio: exactly the models Apple's support article lists, with both capabilities")
    func spatialAudio() {
        let listed: Set<String> = [
            "AirPods (3rd generation)", "AirPods 4", "AirPods 4 (ANC)", "AirPods Pro", "AirPods Pro (2nd generation)",
            "AirPods Pro (2nd generation, USB-C)", "AirPods Pro 3", "AirPods Max", "AirPods Max (USB-C)", "AirPods Max 2",
            "Beats Fit Pro", "Powerbeats Pro 2", "Beats Studio Pro", "Beats Solo 4",
        ]
        let models = AppleModelCatalogue.models
        #expect(Set(models.filter { !$0.spatialCapabilities.isEmpty }.map(\.name)) == listed)
        #expect(models.allSatisfy { $0.spatialCapabilities.isEmpty || $0.spatialCapabilities == [.headTracking, .audioSpatialization] })
        // Neither switching nor placement comes from here: those are the product's and the wear sensor's.
        #expect(models.allSatisfy { $0.spatialCapabilities.isDisjoint(with: [.audioSwitching, .placement]) })
        #expect(AppleModelCatalogue.model(0x2002)?.spatialCapabilities == [])
    }

    @Test("earbuds: either in-ear bit is worn, inEar; neither is offHead")
    func earbuds() {
        // 0x22: the broadcasting bud (left) in an ear; 0x08: the other one; 0x01: nothing worn.
        let pro2 = Self.decode(model: 0x2014, status: 0x22)
        #expect(pro2?.placement == .inEar)
        #expect(pro2?.model == "AirPods Pro (2nd generation)")
        #expect(pro2?.wearSensor == true)
        #expect(Self.decode(model: 0x2014, status: 0x08)?.placement == .inEar)
        #expect(Self.decode(model: 0x2014, status: 0x01)?.placement == .offHead)
        // The product's type does not override a known model's.
        #expect(Self.decode(model: 0x2027, status: 0x22, product: .overEarHeadphone)?.placement == .inEar)
        #expect(Self.decode(model: 0x2012, status: 0x02)?.model == "Beats Fit Pro")
        // Sold from 2025; its id from BLE tools' tables only, so its quirk says the confidence is low.
        #expect(Self.decode(model: 0x202F, status: 0x02)?.model == "Powerbeats Fit")
        #expect(AppleModelCatalogue.model(0x202F)?.quirks.first?.confidence == .low)
    }

    @Test("AirPods Max: status bit 0x20 is worn, overTheEar, whatever the product says; the earbud bits are not")
    func airPodsMax() {
        let worn = Self.decode(model: 0x200A, status: 0x20, product: .inEarBud)
        #expect(worn?.placement == .overTheEar)
        #expect(worn?.worn == true)
        #expect(worn?.model == "AirPods Max")
        #expect(Self.decode(model: 0x200A, status: 0x02)?.placement == .offHead)
        #expect(Self.decode(model: 0x201F, status: 0x21)?.placement == .overTheEar)
        // AirPods Max 2: bit 0x20 always set; either earcup bit says worn.
        #expect(Self.decode(model: 0x202D, status: 0x20)?.placement == .offHead)
        #expect(Self.decode(model: 0x202D, status: 0x23)?.placement == .overTheEar)
        #expect(Self.decode(model: 0x202D, status: 0x28)?.placement == .overTheEar)
    }

    @Test("on-ear and over-ear Beats without a wear sensor: model and battery, no placement")
    func withoutWearSensor() {
        for model: UInt16 in [0x2006, 0x2025, 0x2009, 0x2017] {
            let decoded = Self.decode(model: model, status: 0x22)
            #expect(decoded?.placement == nil && decoded?.worn == nil, "model 0x\(String(model, radix: 16))")
            #expect(decoded?.wearSensor == false)
            #expect(decoded?.battery != nil)
            #expect(decoded?.model == AppleModelCatalogue.model(model)?.name)
        }
        #expect(AppleModelCatalogue.model(0x2006)?.hardware == .onEarHeadphone)
    }

    @Test("an unknown model: model null, the earbuds' bits, worn mapped by the product's hardware type")
    func unknownModel() {
        let onEar = Self.decode(model: 0x20FE, status: 0x22, product: .onEarHeadphone)
        #expect(onEar?.model == nil)
        #expect(onEar?.wearSensor == nil, "unknown, not absent")
        #expect(onEar?.placement == .onHead)
        #expect(
            onEar?.battery
                == Battery(left: 50, right: 80, chargingCase: 60, leftCharging: false, rightCharging: false, caseCharging: false))
        #expect(Self.decode(model: 0x20FE, status: 0x22, product: .overEarHeadphone)?.placement == .overTheEar)
        #expect(Self.decode(model: 0x20FE, status: 0x00, product: .overEarHeadphone)?.placement == .offHead)
        #expect(AppleModelCatalogue.model(0x20FE) == nil)
    }
}
