/// The bytes of Apple's accessory protocol (AAP, also called AACP) that reading an accessory's
/// proximity keys takes: an L2CAP channel on PSM 0x1001 over BR/EDR to AirPods paired with
/// this box, the handshake, two set-up packets, the keys request, and the reply.
///
/// Sources (the bytes are documented there, none of their code is used here):
/// - LibrePods, "AAP Definitions.md" and android/.../utils/AACPManager.kt at commit
///   fb3c8c73a4da016d9c08bc5b9d47d2ef66c5f735 (github.com/kavishdevar/librepods): the PSM, the
///   handshake ("necessary ... Or else, the AirPods will not respond to any packets"), the
///   feature-flags and notification packets its service sends before the keys request
///   (AirPodsService.kt), the request `04 00 04 00 30 00 05 00` (0x05 = IRK 0x01 | encryption
///   key 0x04), the reply's opcode 0x31 and its key blocks;
/// - CAPod (github.com/d4rken-org/capod) at commit abf28f335c907f6daa3f39528ad8b18bca5f2edf,
///   DefaultAapDeviceProfile.kt: the same request and reply (type, a byte, length, a byte, key).
///
/// A key block is `type, length (2 bytes, big-endian), reserved, key bytes`. LibrePods and
/// CAPod read the length from the second of those bytes only (the first is 0 for a 16-byte
/// key); read here as 16 bits, so that a block whose first length byte is not 0 is not misread.
public enum AccessoryProtocol {
    /// The L2CAP PSM the accessory listens on.
    public static let psm: UInt16 = 0x1001

    public static let handshake: [UInt8] = [0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    /// "Set specific features": LibrePods sends it after the handshake on every connection.
    public static let setFeatureFlags: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x4D, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    /// Asks for notifications; LibrePods sends it before the keys request.
    public static let requestNotifications: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x0F, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]
    /// Asks for the IRK (0x01) and the encryption key (0x04).
    public static let requestProximityKeys: [UInt8] = [0x04, 0x00, 0x04, 0x00, 0x30, 0x00, 0x05, 0x00]
    /// What is sent, in order, before the reply is awaited.
    public static let requests = [handshake, setFeatureFlags, requestNotifications, requestProximityKeys]

    /// Every data packet's first four bytes.
    static let dataHeader: [UInt8] = [0x04, 0x00, 0x04, 0x00]
    static let proximityKeysReply: UInt8 = 0x31
    static let irkType: UInt8 = 0x01
    static let encryptionKeyType: UInt8 = 0x04
    static let keyLength = 16
    /// The most packets read while waiting for the reply (the notifications the request turns on).
    public static let maximumPacketsBeforeReply = 64

    /// What a packet from the accessory is, for the exchange.
    public enum Packet: Equatable {
        /// The reply to the keys request.
        case keys(ProximityKeys)
        /// Another packet of the protocol (a notification, an acknowledgement): not the reply.
        case other
    }

    /// Reads one packet. Throws for a reply that cannot be read, or for bytes that are not the
    /// protocol at all (every packet has `04 00` at bytes 2 and 3).
    public static func read(_ packet: [UInt8]) throws(AccessoryLinkError) -> Packet {
        guard packet.count >= 4, packet[2] == 0x04, packet[3] == 0x00 else {
            throw .notTheProtocol(length: packet.count)
        }
        guard packet.count >= 5, Array(packet.prefix(4)) == dataHeader, packet[4] == proximityKeysReply else { return .other }
        return .keys(try parseKeys(packet))
    }

    /// The reply: header, opcode 0x31, a byte, the count, then the key blocks.
    static func parseKeys(_ packet: [UInt8]) throws(AccessoryLinkError) -> ProximityKeys {
        guard packet.count >= 7 else { throw .truncatedReply("it ends before the number of keys") }
        let count = Int(packet[6])
        var offset = 7
        var irk: [UInt8]?
        var encryptionKey: [UInt8]?
        for index in 0..<count {
            guard offset + 4 <= packet.count else { throw .truncatedReply("key \(index + 1) of \(count) is missing") }
            let type = packet[offset]
            let length = Int(packet[offset + 1]) << 8 | Int(packet[offset + 2])
            offset += 4
            guard offset + length <= packet.count else {
                throw .truncatedReply("key \(index + 1) of \(count) has \(packet.count - offset) of its \(length) bytes")
            }
            let bytes = Array(packet[offset..<offset + length])
            offset += length
            switch type {
            case irkType, encryptionKeyType:
                guard length == keyLength else {
                    throw .malformedReply("its \(type == irkType ? "IRK" : "encryption key") has \(length) bytes, not \(keyLength)")
                }
                if type == irkType { irk = bytes } else { encryptionKey = bytes }
            default:
                // A key type this bridge has no use for: skipped, as its length says.
                continue
            }
        }
        guard let irk else { throw .noIRK(encryptionKey: encryptionKey != nil) }
        return ProximityKeys(irk: irk, encryptionKey: encryptionKey)
    }
}
