import AccessoryKit

/// The Apple and Beats models aabridge recognises in proximity-pairing advertisements.
///
/// Apple publishes none of this. The identifiers, hardware types and wear bits come from:
/// - CAPod (github.com/d4rken-org/capod, an Android companion for AirPods, read at commit
///   abf28f3 of 2026-08-22): `pods/core/apple/PodModel.kt` (names, which models have ear
///   detection) and `pods/core/apple/ble/devices/**` (each model's `DEVICE_CODE`, written there
///   big-endian as the bytes appear, so its 0x0E20 is our 0x200E; and each model's `isBeingWorn`);
///   its issues #106 (AirPods Max: bit 0x20 is the wear flag, fixed in #108) and #548
///   (AirPods Max 2: bit 0x20 always set, the earcups' bits 0x02/0x08 instead, some phones
///   seeing only one of them); its commit 6c37945 (only the primary bud's ear detection);
///   `SingleApplePods` and the models built on it (which models have one battery: AirPods Max,
///   the Beats headphones, Beats Flex and X, Powerbeats 3 and 4; Studio Buds and Solo Buds have
///   two buds and a case, `DualApplePods`).
/// - TheengsDecoder (github.com/theengs/decoder, `APPLEAIRPODS_json.h`), whose lookup of
///   0x2002, 0x200E, 0x2014, 0x2003, 0x2005 and 0x2006 agrees.
/// - furiousMAC "continuity" and OpenPods for the message layout (``ProximityPairing``).
/// - Powerbeats Fit (sold from 2025): CAPod does not list it yet; its id 0x202F comes from the
///   model tables of BLE spoofing tools (Flipper Zero's apple_ble_spam and its ports: "Powerbeats
///   Fit", bytes 0x2F 0x20), a weaker source: those same tables give ids for AirPods 4 and
///   Powerbeats Pro 2 that disagree with CAPod's and with owners' BlueZ modalias (0x2019,
///   0x201D), so only this id, which nothing contradicts, is taken, with a low-confidence quirk.
///
/// Checked against CAPod at abf28f3 (2026-08-22), every model it knows is here. Not here: the
/// AirPods Pro 3 case's own advertisement carries no model id at all (``ProximityPairingMessage``),
/// so there is none to list.
///
/// Spatial audio with dynamic head tracking (`spatial: headTracked`, the capabilities
/// `headTracking` and `audioSpatialization`): the models Apple's support article "Listen with
/// Personalized Spatial Audio for AirPods and Beats" (support.apple.com/HT211775) lists for it:
/// AirPods (3rd generation), AirPods 4, every AirPods Pro and AirPods Max, Beats Fit Pro,
/// Powerbeats Pro 2, Beats Studio Pro and Beats Solo 4. A model it does not list has none,
/// even where it plays spatialized (fixed) audio.
///
/// A model missing here still decodes: its `model` is `null`, its wear bits are read the
/// earbuds' way and "worn" takes the product's hardware type (domain.md, placement).
public enum AppleModelCatalogue {
    private static let primaryBudOnly = AppleModel.Quirk(
        "with one bud worn, only the primary (microphone) bud's ear detection may be advertised",
        confidence: .medium, source: "CAPod commit 6c37945 (ear detection note)")
    private static let noWearSensor = AppleModel.Quirk(
        "no wear sensor: its advertisements give no placement", confidence: .high,
        source: "CAPod PodModel.kt (no ear detection)")

    /// What a model with spatial audio and dynamic head tracking can register beyond switching and placement.
    public static let headTracked: AccessoryControlDevice.Capabilities = [.headTracking, .audioSpatialization]

    /// Every known model, AirPods first.
    public static let models: [AppleModel] = [
        AppleModel(0x2002, "AirPods", .inEarBud, quirks: [primaryBudOnly]),
        AppleModel(0x200F, "AirPods (2nd generation)", .inEarBud, quirks: [primaryBudOnly]),
        AppleModel(0x2013, "AirPods (3rd generation)", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x2019, "AirPods 4", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x201B, "AirPods 4 (ANC)", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x200E, "AirPods Pro", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x2014, "AirPods Pro (2nd generation)", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x2024, "AirPods Pro (2nd generation, USB-C)", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(0x2027, "AirPods Pro 3", .inEarBud, spatial: headTracked, quirks: [primaryBudOnly]),
        AppleModel(
            0x200A, "AirPods Max", .overEarHeadphone, wear: .statusBit5, batteries: .single,
            spatial: headTracked,
            quirks: [.init("worn is status bit 0x20, not the earbuds' bits", confidence: .high, source: "CAPod issue #106, PR #108")]),
        AppleModel(
            0x201F, "AirPods Max (USB-C)", .overEarHeadphone, wear: .statusBit5, batteries: .single,
            spatial: headTracked,
            quirks: [.init("worn is status bit 0x20, as on the first AirPods Max", confidence: .medium, source: "CAPod AirPodsMaxUsbc.kt")]),
        AppleModel(
            0x202D, "AirPods Max 2", .overEarHeadphone, batteries: .single,
            spatial: headTracked,
            quirks: [
                .init(
                    "bit 0x20 is always set; each earcup's bit (0x02, 0x08) says worn, and some receivers see only one",
                    confidence: .medium, source: "CAPod issue #548")
            ]),
        AppleModel(0x2003, "Powerbeats3", .inEarBud, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x200D, "Powerbeats4", .inEarBud, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x200B, "Powerbeats Pro", .inEarBud),
        AppleModel(0x201D, "Powerbeats Pro 2", .inEarBud, spatial: headTracked),
        AppleModel(
            0x202F, "Powerbeats Fit", .inEarBud,
            quirks: [
                .init(
                    "model id from BLE tools' model tables only, no capture: wear bits and batteries assumed as its predecessor Beats Fit Pro's",
                    confidence: .low, source: "Flipper Zero apple_ble_spam tables (\"Powerbeats Fit\" 0x2F20)")
            ]),
        AppleModel(0x2005, "BeatsX", .inEarBud, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x2010, "Beats Flex", .inEarBud, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x2012, "Beats Fit Pro", .inEarBud, spatial: headTracked),
        AppleModel(0x2011, "Beats Studio Buds", .inEarBud, wear: .none, quirks: [noWearSensor]),
        AppleModel(0x2016, "Beats Studio Buds +", .inEarBud, wear: .none, quirks: [noWearSensor]),
        AppleModel(0x2026, "Beats Solo Buds", .inEarBud, wear: .none, quirks: [noWearSensor]),
        AppleModel(0x2006, "Beats Solo3", .onEarHeadphone, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x200C, "Beats Solo Pro", .onEarHeadphone, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(0x2025, "Beats Solo 4", .onEarHeadphone, wear: .none, batteries: .single, spatial: headTracked, quirks: [noWearSensor]),
        AppleModel(0x2009, "Beats Studio3", .overEarHeadphone, wear: .none, batteries: .single, quirks: [noWearSensor]),
        AppleModel(
            0x2017, "Beats Studio Pro", .overEarHeadphone, wear: .none, batteries: .single, spatial: headTracked, quirks: [noWearSensor]),
    ]

    private static let byID: [UInt16: AppleModel] = Dictionary(models.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

    /// The model with this identifier, or `nil` for one the catalogue does not know.
    public static func model(_ id: UInt16) -> AppleModel? { byID[id] }
}
