import AccessoryKit
import Telemetry

/// One entry of `products:`: the engine's `Product` plus how the bridge reads its placement.
public struct ProductConfiguration: Hashable, Sendable {
    public var product: Product
    public var placementDecoder: PlacementDecoder

    /// Creates a product entry.
    public init(product: Product, placementDecoder: PlacementDecoder = .none) {
        self.product = product
        self.placementDecoder = placementDecoder
    }

    /// The product's name, which migrations and requests refer to.
    public var name: String { product.name }
}
