import AccessoryKit

/// A heard gateway's advertisements over the last minute, in six 10-second buckets: how many,
/// how many carried manufacturer data, how many counted for an accessory. Fixed size, so a
/// gateway's figures cost the same whatever it sends.
struct AdvertisementWindow: Hashable, Sendable {
    struct Counts: Hashable, Sendable {
        var advertisements = 0
        var withManufacturerData = 0
        var attributed = 0

        static func + (lhs: Counts, rhs: Counts) -> Counts {
            Counts(
                advertisements: lhs.advertisements + rhs.advertisements,
                withManufacturerData: lhs.withManufacturerData + rhs.withManufacturerData, attributed: lhs.attributed + rhs.attributed)
        }
    }

    static let bucketMilliseconds: Int64 = 10_000
    static let bucketCount = 6

    private var buckets = [Counts](repeating: Counts(), count: bucketCount)
    /// The bucket number (time / bucket length) of the newest bucket.
    private var newest: Int64 = 0

    mutating func count(withManufacturerData: Bool, attributed: Bool, at now: Timestamp) {
        advance(to: now)
        let index = Self.slot(newest)
        buckets[index].advertisements += 1
        if withManufacturerData { buckets[index].withManufacturerData += 1 }
        if attributed { buckets[index].attributed += 1 }
    }

    /// The counts of the last minute (the current bucket and the five before it).
    func lastMinute(at now: Timestamp) -> Counts {
        let current = now.milliseconds / Self.bucketMilliseconds
        let stale = current - newest
        guard stale < Int64(Self.bucketCount) else { return Counts() }
        // Buckets older than a minute at `now` are left out without being cleared.
        var total = Counts()
        for age in Int64(0)..<Int64(Self.bucketCount) - max(0, stale) {
            total = total + buckets[Self.slot(newest - age)]
        }
        return total
    }

    /// The bucket of bucket number `number` (never negative: a clock near its epoch, as some
    /// tests give, has numbers below the bucket count).
    private static func slot(_ number: Int64) -> Int {
        let count = Int64(bucketCount)
        return Int((number % count + count) % count)
    }

    private mutating func advance(to now: Timestamp) {
        let current = now.milliseconds / Self.bucketMilliseconds
        guard current > newest else { return }
        let steps = min(current - newest, Int64(Self.bucketCount))
        for step in 1...steps { buckets[Self.slot(newest + step)] = Counts() }
        newest = current
    }
}
