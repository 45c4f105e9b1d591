import AccessoryLink
import Foundation
import Synchronization
import Testing

/// The keys exchange against a scripted peer: one end of a real AF_UNIX SOCK_SEQPACKET socket
/// pair (packets kept whole, as an L2CAP channel keeps them) answers as the AirPods do in
/// LibrePods' documentation (AAP Definitions.md, AACPManager.kt at fb3c8c73): it reads the
/// handshake, the two set-up packets and the keys request, then sends what the test scripts.
@Suite("Proximity keys over the accessory protocol")
struct ProximityKeysFetchTests {
    /// The Bluetooth Core Specification's sample IRK (Vol 3 Part H, D.7) and a second key.
    static let irk: [UInt8] = [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B]
    static let encryptionKey: [UInt8] = Array(0x10...0x1F)
    /// A battery notification as LibrePods documents it: sent once notifications are on.
    static let battery: [UInt8] = [
        0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x03, 0x02, 0x01, 0x64, 0x02, 0x01, 0x04, 0x01, 0x63, 0x01, 0x01, 0x08, 0x01, 0x11, 0x02,
        0x01,
    ]
    /// The handshake's acknowledgement (`01 00 04 00 ...`).
    static let handshakeAck: [UInt8] = [0x01, 0x00, 0x04, 0x00, 0x00, 0x00]

    static func block(_ type: UInt8, _ key: [UInt8]) -> [UInt8] { [type, 0x00, UInt8(key.count), 0x00] + key }
    static func reply(_ blocks: [[UInt8]]) -> [UInt8] { [0x04, 0x00, 0x04, 0x00, 0x31, 0x00, UInt8(blocks.count)] + blocks.joined() }
    static var bothKeys: [UInt8] { reply([block(0x01, irk), block(0x04, encryptionKey)]) }

    /// What the peer does after reading the four requests.
    enum Step: Sendable {
        case send([UInt8])
        case close
        case wait(Duration)
    }

    /// Runs the exchange against a peer that plays `script`; returns what the peer received and
    /// the exchange's outcome.
    static func exchange(
        _ script: [Step], timeout: Duration = .seconds(5)
    ) -> (
        received: [[UInt8]], result: Result<ProximityKeys, AccessoryLinkError>
    ) {
        var pair: [Int32] = [0, 0]
        let made = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair)
        precondition(made == 0, "socketpair: \(errno)")
        let peer = pair[1]
        let received = ReceivedPackets()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            var closed = false
            for _ in 0..<AccessoryProtocol.requests.count {
                var buffer = [UInt8](repeating: 0, count: 256)
                let count = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received.append(Array(buffer.prefix(count)))
            }
            for step in script {
                switch step {
                case .send(let bytes): _ = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                case .close:
                    close(peer)
                    closed = true
                case .wait(let duration):
                    Thread.sleep(forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
                }
                if closed { break }
            }
            if !closed {
                // Stays open until the other end goes, as a silent accessory would.
                var byte: UInt8 = 0
                _ = recv(peer, &byte, 1, 0)
                close(peer)
            }
        }
        let socket = PacketSocket(descriptor: pair[0])
        let result = Result { () throws(AccessoryLinkError) in try ProximityKeysFetch.run(over: socket, timeout: timeout) }
        withExtendedLifetime(socket) {}
        _ = consume socket
        done.wait()
        return (received.packets, result)
    }

    @Test("sends the documented handshake, set-up packets and request, and reads both keys past a notification")
    func bothKeys() throws {
        let (received, result) = Self.exchange([.send(Self.handshakeAck), .send(Self.battery), .send(Self.bothKeys)])
        #expect(
            received == [
                [0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
                [0x04, 0x00, 0x04, 0x00, 0x4D, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
                [0x04, 0x00, 0x04, 0x00, 0x0F, 0x00, 0xFF, 0xFF, 0xFF, 0xFF],
                [0x04, 0x00, 0x04, 0x00, 0x30, 0x00, 0x05, 0x00],
            ])
        let keys = try result.get()
        #expect(keys.irk == Self.irk)
        #expect(keys.encryptionKey == Self.encryptionKey)
        #expect(!"\(keys)".lowercased().contains("ec0234"))
    }

    @Test("an IRK alone is read; an unknown key type is skipped by its length")
    func irkAlone() throws {
        let reply = Self.reply([Self.block(0x08, Array(repeating: 0xAA, count: 5)), Self.block(0x01, Self.irk)])
        let keys = try Self.exchange([.send(reply)]).result.get()
        #expect(keys.irk == Self.irk)
        #expect(keys.encryptionKey == nil)
    }

    @Test("a reply without keys, or with the encryption key only, is an error naming it")
    func noKeys() {
        #expect(Self.exchange([.send(Self.reply([]))]).result.failure == .noIRK(encryptionKey: false))
        let encryptionOnly = Self.exchange([.send(Self.reply([Self.block(0x04, Self.encryptionKey)]))]).result
        #expect(encryptionOnly.failure == .noIRK(encryptionKey: true))
        #expect(encryptionOnly.failure?.message.contains("has no IRK") == true)
    }

    @Test("a truncated reply is an error, wherever it is cut")
    func truncated() {
        let full = Self.bothKeys
        for cut in [6, 9, 20, full.count - 1] {
            let result = Self.exchange([.send(Array(full.prefix(cut)))]).result
            guard case .truncatedReply = result.failure else {
                Issue.record("cut at \(cut): \(result)")
                continue
            }
            #expect(result.failure?.message.contains("truncated") == true)
        }
    }

    @Test("a key of the wrong length is malformed")
    func wrongLength() {
        let result = Self.exchange([.send(Self.reply([Self.block(0x01, Array(Self.irk.prefix(15)))]))]).result
        #expect(result.failure == .malformedReply("its IRK has 15 bytes, not 16"))
    }

    @Test("bytes that are not the protocol are refused")
    func garbage() {
        let result = Self.exchange([.send([0x48, 0x54, 0x54, 0x50, 0x2F, 0x31])]).result
        #expect(result.failure == .notTheProtocol(length: 6))
        #expect(result.failure?.message.contains("not Apple's accessory protocol") == true)
    }

    @Test("a peer that closes before replying")
    func closes() {
        let result = Self.exchange([.send(Self.handshakeAck), .close]).result
        #expect(result.failure == .closed)
    }

    @Test("a silent peer times out")
    func slow() {
        let result = Self.exchange([.wait(.seconds(2))], timeout: .milliseconds(300)).result
        #expect(result.failure == .timedOut(seconds: 0))
        #expect(result.failure?.message.contains("did not answer") == true)
    }

    @Test("a peer that only sends notifications gives up after a bounded number of packets")
    func endlessNotifications() {
        let steps = Array(repeating: Step.send(Self.battery), count: AccessoryProtocol.maximumPacketsBeforeReply)
        #expect(Self.exchange(steps).result.failure == .noReply(packets: AccessoryProtocol.maximumPacketsBeforeReply))
    }
}

/// What the scripted peer read, kept across its thread.
final class ReceivedPackets: Sendable {
    private let stored = Mutex<[[UInt8]]>([])

    func append(_ packet: [UInt8]) { stored.withLock { $0.append(packet) } }
    var packets: [[UInt8]] { stored.withLock { $0 } }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
