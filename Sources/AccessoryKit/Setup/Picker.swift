/// The accessory picker: at most one, presented for some products, collecting
/// candidates from advertisements while presented.
public struct Picker: Hashable, Sendable {
    /// An accessory seen by the presented picker.
    public struct Candidate: Hashable, Sendable {
        public var id: BluetoothAddress
        /// The advertised name, else the decoded model's ("AirPods Pro"), if any.
        public var name: String?
        /// The product whose descriptor matched.
        public var product: String
        public var rssi: Int
        public var gateway: String
        /// When it was last heard; a selection after the availability timeout fails.
        public var lastSeen: Timestamp
        /// What its last advertisement said (model, battery, placement): a candidate selected is
        /// known from that sighting at once (household.md: the pairing sighting counts).
        public var decoded: AdvertisementSighting.Decoded?
        /// Its last advertisement's proximity profile.
        public var profile: ProximityProfile?

        /// Creates a candidate.
        public init(id: BluetoothAddress, name: String?, product: String, rssi: Int, gateway: String, lastSeen: Timestamp) {
            self.id = id
            self.name = name
            self.product = product
            self.rssi = rssi
            self.gateway = gateway
            self.lastSeen = lastSeen
        }
    }

    /// Candidates are bounded so that a crowded radio environment cannot grow state without limit.
    public static let maximumCandidates = 64

    /// The products shown, in configuration order.
    public var products: [String]
    /// Candidates in discovery order, one per accessory.
    public var candidates: [Candidate]
    /// When discovery times out; nil for unbounded.
    public var expiresAt: Timestamp?

    /// Creates a picker state.
    public init(products: [String], candidates: [Candidate] = [], expiresAt: Timestamp?) {
        self.products = products
        self.candidates = candidates
        self.expiresAt = expiresAt
    }

    /// The candidate with an id.
    public func candidate(_ id: BluetoothAddress) -> Candidate? {
        candidates.first { $0.id == id }
    }
}
