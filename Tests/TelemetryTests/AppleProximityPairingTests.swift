import AccessoryKit
import Testing

@testable import Telemetry

@Suite struct AppleProximityPairingTests {
    static func decode(_ hex: String) throws -> ProximityPairing {
        let raw = try #require(Hex.decode(hex))
        return try ProximityPairing(manufacturerData: try #require(ManufacturerData(raw: raw)))
    }

    @Test func bothBudsInTheCase() throws {
        // Public decoder test vector: AirPods Pro, both buds in the open case, buds 100 %, case 50 %.
        let status = try Self.decode("4c000719010e2054aab5310000e00ca78a604bd37df4604f2c73e9a7f4")
        #expect(status.model == 0x200E)
        #expect(status.modelName == "AirPods Pro")
        #expect(!status.leftInEar && !status.rightInEar)
        #expect(status.leftInCase == true && status.rightInCase == true)
        #expect(status.leftBattery == 100 && status.rightBattery == 100 && status.caseBattery == 50)
        #expect(
            status.battery
                == Battery(left: 100, right: 100, chargingCase: 50, leftCharging: true, rightCharging: true, caseCharging: false))
        // Charging nibble 0xB: broadcasting (right) bud 0x01, other (left) 0x02, case 0x04 clear, 0x08 set.
        #expect(status.leftCharging && status.rightCharging && !status.caseCharging)
        #expect(status.lidOpen == true)
        #expect(status.knownModel?.placement(status) == .offHead)
    }

    @Test func leftBudInEarBroadcastingFromTheLeft() throws {
        // Theengs fixture: status 0x22 = left broadcasts (0x20) and is in an ear (0x02);
        // battery 0xF5: broadcasting (left) 50 %, other unknown; case unknown.
        let status = try Self.decode("4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8")
        #expect(status.leftInEar && !status.rightInEar)
        #expect(status.leftInCase == false)
        #expect(status.rightInCase == nil)
        #expect(status.leftBattery == 50 && status.rightBattery == nil && status.caseBattery == nil)
        #expect(status.battery == Battery(left: 50, leftCharging: false))
        #expect(status.lidOpen == nil)
        #expect(status.knownModel?.placement(status) == .inEar)
    }

    @Test func flipSwapsTheBuds() throws {
        // Same as above but broadcasting from the right (bit 0x20 clear), with the other bud in an
        // ear (0x08) and battery nibbles right 70 % / left 30 %, left charging (bit 0x02 = other).
        let status = try Self.decode("4c000719010e2008372100000000000000000000000000000000000000")
        #expect(!status.rightInEar && status.leftInEar)
        #expect(status.rightBattery == 70 && status.leftBattery == 30)
        #expect(status.leftCharging && !status.rightCharging)
        #expect(status.caseBattery == 10)
        #expect(status.knownModel?.placement(status) == .inEar)
    }

    @Test func rightBudInEarOnly() throws {
        let status = try Self.decode("4c000719010e2002aa0000000000000000000000000000000000000000")
        #expect(status.rightInEar && !status.leftInEar)
        #expect(status.knownModel?.placement(status) == .inEar)
    }

    @Test func nearbyInfoIsNotProximityPairing() throws {
        #expect(throws: ProximityPairing.DecodingError.notProximityPairing(0x10)) { try Self.decode("4c0010060319247bbc68") }
    }

    @Test func proximityPairingAfterAnotherMessage() throws {
        let status = try Self.decode("4c00100203190719010e2022aa8f00000000000000000000000000000000000000")
        #expect(status.leftInEar)
    }

    @Test func otherCompanyAndTruncation() throws {
        #expect(throws: ProximityPairing.DecodingError.notApple(0x00DC)) { try Self.decode("dc000719010e2022") }
        // Shorter than its length byte: refused, not decoded as truncated; a message whose
        // length byte says 5 is whole but too short for the status fields.
        #expect(throws: ProximityPairing.DecodingError.malformed(.shorterThanLength)) { try Self.decode("4c000719010e202255") }
        #expect(throws: ProximityPairing.DecodingError.truncated(5)) { try Self.decode("4c000705010e202255") }
        #expect(throws: ProximityPairing.DecodingError.notProximityPairing(nil)) { try Self.decode("4c00") }
    }
}

@Suite struct PlacementDecoderTests {
    static func advertisement(manufacturer: String? = nil, service: (String, String)? = nil) -> Advertisement {
        var advertisement = Advertisement(gateway: "gw", address: BluetoothAddress(rawValue: 1), receivedAt: 0)
        if let manufacturer { advertisement.manufacturerData = [ManufacturerData(raw: Hex.decode(manufacturer)!)!] }
        if let (uuid, data) = service { advertisement.serviceData = [ServiceData(uuid: BluetoothUUID(uuid)!, data: Hex.decode(data)!)] }
        return advertisement
    }

    @Test func manufacturerByteAfterTheCompanyIdentifier() {
        let rule = PlacementDecoder.Rule(source: .manufacturer(companyIdentifier: nil), offset: 3, mask: 0x01, wornWhen: 0x01)
        #expect(rule.worn(in: Self.advertisement(manufacturer: "ffff00000001")) == true)
        #expect(rule.worn(in: Self.advertisement(manufacturer: "ffff000000fe")) == false)
        // Too short or absent: unknown, not "off".
        #expect(rule.worn(in: Self.advertisement(manufacturer: "ffff000000")) == nil)
        #expect(rule.worn(in: Self.advertisement()) == nil)
    }

    @Test func companyFilterAndServiceData() {
        let apple = PlacementDecoder.Rule(source: .manufacturer(companyIdentifier: 0x004C), offset: 0, mask: 0xFF, wornWhen: 0x07)
        #expect(apple.worn(in: Self.advertisement(manufacturer: "4c0007")) == true)
        #expect(apple.worn(in: Self.advertisement(manufacturer: "dc0007")) == nil)
        let service = PlacementDecoder.Rule(source: .service(BluetoothUUID("fe2c")), offset: 1, mask: 0xF0, wornWhen: 0xA0)
        #expect(service.worn(in: Self.advertisement(service: ("0xFE2C", "00aabbcc"))) == true)
        #expect(service.worn(in: Self.advertisement(service: ("fe2d", "00aabbcc"))) == nil)
        #expect(service.worn(in: Self.advertisement(service: ("fe2c", "0050"))) == false)
        let anyService = PlacementDecoder.Rule(source: .service(nil), offset: 0, mask: 0x01, wornWhen: 0x01)
        #expect(anyService.worn(in: Self.advertisement(service: ("fe2d", "01"))) == true)
    }

    @Test func ruleDecodesWornByHardwareType() {
        let decoder = PlacementDecoder.rule(.init(source: .manufacturer(companyIdentifier: nil), offset: 3, mask: 0x01, wornWhen: 0x01))
        let worn = Self.advertisement(manufacturer: "ffff00000001"), off = Self.advertisement(manufacturer: "ffff00000000")
        #expect(decoder.decode(worn, hardware: .overEarHeadphone) == AdvertisementSighting.Decoded(worn: true, placement: .overTheEar))
        #expect(decoder.decode(off, hardware: .overEarHeadphone) == AdvertisementSighting.Decoded(worn: false, placement: .offHead))
        // Without the product's hardware a worn reading carries no placement: the engine maps it.
        #expect(decoder.decode(worn, hardware: nil) == AdvertisementSighting.Decoded(worn: true, placement: nil))
        #expect(decoder.decode(off, hardware: nil) == AdvertisementSighting.Decoded(worn: false, placement: .offHead))
        #expect(decoder.decode(Self.advertisement(), hardware: .inEarBud) == nil)
    }

    @Test func appleProximityAndNone() throws {
        // Left bud in an ear, 50 %, from the Theengs fixture.
        let advertisement = Self.advertisement(manufacturer: "4c000719010e2022f58f00000a7d9fff27234873d4305e0fed1b39e2b8")
        #expect(
            PlacementDecoder.appleProximity.decode(advertisement, hardware: .inEarBud)
                == AdvertisementSighting.Decoded(
                    worn: true, placement: .inEar, battery: Battery(left: 50, leftCharging: false), model: "AirPods Pro",
                    wearSensor: true))
        #expect(PlacementDecoder.appleProximity.decode(Self.advertisement(manufacturer: "dc0007"), hardware: .inEarBud) == nil)
        #expect(PlacementDecoder.none.decode(advertisement, hardware: .inEarBud) == nil)
        #expect(
            [PlacementDecoder.none, .appleProximity, .rule(.init(source: .service(nil), offset: 0, mask: 1, wornWhen: 1))].map(\.name)
                == ["none", "apple_proximity", "rule"])
    }

    @Test func sightingCarriesTheIdentityAndTheDecodedReading() throws {
        var advertisement = Self.advertisement(manufacturer: "ffff00000001", service: ("fe2c", "0102"))
        advertisement.rssi = -60
        advertisement.name = "Buds"
        advertisement.serviceUUIDs = [BluetoothUUID(shortValue: 0xFE2C)]
        let identity = BluetoothAddress(rawValue: 0xA1B2_C3D4_E5F6)
        let decoder = PlacementDecoder.rule(.init(source: .manufacturer(companyIdentifier: nil), offset: 3, mask: 0x01, wornWhen: 0x01))
        let sighting = advertisement.sighting(identity: identity, decoder: decoder, hardware: .inEarBud)
        #expect(
            sighting
                == AdvertisementSighting(
                    gateway: "gw", accessoryID: identity, rssi: -60, name: "Buds",
                    manufacturerData: ManufacturerData(companyIdentifier: 0xFFFF, payload: [0, 0, 0, 1]),
                    serviceData: [BluetoothUUID(shortValue: 0xFE2C): [1, 2]], serviceUUIDs: [BluetoothUUID(shortValue: 0xFE2C)],
                    decoded: AdvertisementSighting.Decoded(worn: true, placement: .inEar)))
        // No signal strength (a decoded-only message): the floor, so the accessory still counts as heard.
        advertisement.rssi = nil
        #expect(advertisement.sighting(identity: identity, decoder: .none, hardware: nil).rssi == -127)
        #expect(advertisement.sighting(identity: identity, decoder: .none, hardware: nil).decoded == nil)
    }
}
