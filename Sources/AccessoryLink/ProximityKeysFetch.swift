/// The exchange that reads an accessory's proximity keys over an open channel: the handshake,
/// the set-up packets and the keys request (`AccessoryProtocol.requests`), then packets are
/// read until the keys reply, within one deadline. Notifications and acknowledgements before
/// the reply are passed over (at most `AccessoryProtocol.maximumPacketsBeforeReply`); bytes
/// that are not the protocol, a peer that closes, a reply without an IRK, a truncated reply
/// and silence are each an error.
public enum ProximityKeysFetch {
    public static let defaultTimeout: Duration = .seconds(10)

    public static func run(over socket: PacketSocket, timeout: Duration = defaultTimeout) throws(AccessoryLinkError) -> ProximityKeys {
        for request in AccessoryProtocol.requests { try socket.send(request) }
        let deadline = ContinuousClock.now + timeout
        for _ in 0..<AccessoryProtocol.maximumPacketsBeforeReply {
            guard let packet = try socket.receive(until: deadline, timeout: timeout) else { throw .closed }
            if case .keys(let keys) = try AccessoryProtocol.read(packet) { return keys }
        }
        throw .noReply(packets: AccessoryProtocol.maximumPacketsBeforeReply)
    }
}
