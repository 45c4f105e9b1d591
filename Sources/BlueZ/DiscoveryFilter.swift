/// The discovery filter the bluez gateway sets before it starts discovery (docs/configuration.md,
/// "The box's own adapter"): LE only, and `DuplicateData` so that BlueZ signals every
/// advertisement's manufacturer data, not only the ones that changed it (an accessory's battery
/// and placement repeat for minutes; each repetition is a sighting for availability and room).
/// BlueZ merges it with other clients' filters (Home Assistant's, bluetoothctl's).
public enum DiscoveryFilter {
    public static let transport = "le"
    public static let duplicateData = true
}
