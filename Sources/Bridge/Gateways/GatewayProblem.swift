import AccessoryKit

/// Something a heard gateway cannot do that makes the bridge useless through it, as
/// household.md ("What gateways and advertisements really say") names them: shown under the
/// gateway on `bridge/gateways`, logged once when it appears, and Home Assistant's per-node
/// sensor state.
enum GatewayProblem: String, Hashable, Sendable, CaseIterable {
    /// At least ``minimumAdvertisements`` advertisements in the last minute, none with
    /// manufacturer data: an OpenMQTTGateway (or Theengs) without `pubadvdata`, so no
    /// accessory is ever a candidate and no placement is ever known.
    case noManufacturerData = "no_manufacturer_data"
    /// An ESPresense node while a paired Apple accessory has no IRK: ESPresense never forwards
    /// Apple proximity frames and reports an Apple accessory only by its IRK (`known_irks`).
    case espresenseNeedsIRK = "espresense_needs_irk"
    /// It first heard ``LookalikeTracker/floodCount`` fresh look-alikes of an away accessory
    /// within `lookalike_window_s`: a device near it inventing addresses, or a replay. Its
    /// look-alikes are only offered while the problem stands.
    case lookalikeFlood = "lookalike_flood"
    /// A Home Assistant scanner forwarded by the relay (``GatewayFormat/haRelay``) and heard
    /// before has said nothing, not even the relay's heartbeat, for ``silentMilliseconds``:
    /// Home Assistant, its MQTT integration or the relay stopped.
    case relaySilent = "relay_silent"
    /// The relay says a scanner is offline: Home Assistant removed it (an ESPHome proxy
    /// unplugged) or it has heard nothing for a while.
    case scannerOffline = "scanner_offline"
    /// A `bluez` gateway's faults (``BlueZSource``), each with its remedy; the source retries
    /// by itself, so each goes when the cause does.
    case bluezNoSystemBus = "bluez_no_system_bus"
    case bluezNotRunning = "bluez_not_running"
    case bluezNoAdapter = "bluez_no_adapter"
    case bluezPermissionDenied = "bluez_permission_denied"
    case bluezAdapterOff = "bluez_adapter_off"
    /// Passive scanning asked for where BlueZ offers no `or_patterns` monitor: scanning actively.
    case bluezPassiveUnavailable = "bluez_passive_unavailable"

    static let minimumAdvertisements = 50
    /// The relay's heartbeat is a minute (custom_components/aabridge_relay): three missed.
    static let silentMilliseconds: Int64 = 180_000

    /// The problem's message; `needingIRK` names the Apple accessories without an IRK.
    func message(needingIRK: [String] = []) -> String {
        switch self {
        case .noManufacturerData:
            "OpenMQTTGateway publishes no manufacturer data: set pubadvdata (docs/operations.md, \"Gateway firmware\")"
        case .espresenseNeedsIRK:
            "ESPresense never forwards Apple proximity frames and reports an Apple accessory only by its IRK: add the IRK of "
                + (needingIRK.isEmpty ? "each Apple accessory" : needingIRK.joined(separator: ", "))
                + " to known_irks, and give it to aabridge (\(RequestName.keys.name))"
        case .lookalikeFlood:
            "hears many fresh addresses with an accessory's model and colour (a device near it inventing addresses, or a replay): "
                + "its look-alikes are only offered, never re-attached by themselves, and one it heard once is no rival, while this "
                + "stands; if no crowd of such accessories is near it, look for what is"
        case .relaySilent:
            "nothing from Home Assistant's relay for 3 minutes: check that Home Assistant runs, that its MQTT integration is "
                + "connected and that the aabridge relay integration is loaded (docs/operations.md, \"Using the Bluetooth your "
                + "Home Assistant already has\")"
        case .scannerOffline:
            "Home Assistant's relay says this scanner is offline (removed or hearing nothing): check the ESPHome proxy or "
                + "adapter under Settings > Devices & services > Bluetooth in Home Assistant"
        case .bluezNoSystemBus:
            "the system D-Bus cannot be reached: run the bridge where /run/dbus/system_bus_socket is (containers: mount it; the add-on: host_dbus)"
        case .bluezNotRunning:
            "bluetoothd is not on the system bus (no org.bluez): install bluez and start it (systemctl start bluetooth)"
        case .bluezNoAdapter:
            "BlueZ lists no such adapter: plug one in, or check the entry's adapter against bluetoothctl list"
        case .bluezPermissionDenied:
            "the system bus refused a call to BlueZ: run the bridge as root or in a group bluetooth.conf (/usr/share/dbus-1/system.d) allows"
        case .bluezAdapterOff:
            "the adapter is powered off: the bridge never powers it (bluetoothctl power on; rfkill unblock bluetooth)"
        case .bluezPassiveUnavailable:
            "passive scanning is not offered (an or_patterns advertisement monitor needs BlueZ 5.56 or later started with --experimental, Linux 5.10 or later): scanning actively"
        }
    }
}
