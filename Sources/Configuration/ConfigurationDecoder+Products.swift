import AccessoryKit
import Telemetry

extension ConfigurationDecoder {
    // MARK: setup

    /// The `setup:` section; missing keys keep the default declaration (`supports: [bluetooth]`, nothing else).
    func setup(_ node: YAMLNode?) -> SetupDeclaration? {
        guard let section = fields(node, at: "setup", allowed: ["supports", "bluetooth"]) else { return nil }
        var declaration = SetupDeclaration(supports: [.bluetooth])
        if let supportsNode = section["supports"], let items = list(supportsNode, at: section.path("supports")) {
            var supports: Set<SetupDeclaration.Technology> = []
            for (index, item) in items.enumerated() {
                if let technology = enumeration(Technology.self, item, at: "\(section.path("supports"))[\(index)]") {
                    supports.insert(technology.value)
                }
            }
            declaration.supports = supports
        }
        guard
            let bluetooth = fields(
                section["bluetooth"], at: section.path("bluetooth"), allowed: ["company_identifiers", "services", "names"])
        else { return declaration }
        let companies = list(bluetooth["company_identifiers"], at: bluetooth.path("company_identifiers")) ?? []
        for (index, item) in companies.enumerated() {
            if let value = integer(item, at: "\(bluetooth.path("company_identifiers"))[\(index)]", in: 0...0xFFFF, hex: true) {
                declaration.bluetoothCompanyIdentifiers.insert(UInt16(value))
            } else if item.isNull {
                fail("\(bluetooth.path("company_identifiers"))[\(index)]", "must not be null", at: item)
            }
        }
        let services = list(bluetooth["services"], at: bluetooth.path("services")) ?? []
        for (index, item) in services.enumerated() {
            if let uuid = uuid(item, at: "\(bluetooth.path("services"))[\(index)]") {
                declaration.bluetoothServices.insert(uuid)
            } else if item.isNull {
                fail("\(bluetooth.path("services"))[\(index)]", "must not be null", at: item)
            }
        }
        let names = list(bluetooth["names"], at: bluetooth.path("names")) ?? []
        for (index, item) in names.enumerated() {
            let path = "\(bluetooth.path("names"))[\(index)]"
            if let name = string(item, at: path) {
                if name.isEmpty { fail(path, "must not be empty", at: item) } else { declaration.bluetoothNames.insert(name) }
            } else if item.isNull {
                fail(path, "must not be null", at: item)
            }
        }
        return declaration
    }

    /// `SetupDeclaration.Technology` is not `CaseIterable`; this lists its spellings for messages.
    private enum Technology: String, CaseIterable {
        case bluetooth
        case wifi

        var value: SetupDeclaration.Technology {
            switch self {
            case .bluetooth: .bluetooth
            case .wifi: .wifi
            }
        }
    }

    // MARK: products

    static let productKeys = ["name", "hardware", "capabilities", "auto_register", "placement_decoder", "setup_options", "descriptor"]

    func products(_ node: YAMLNode?) -> [ProductConfiguration] {
        guard let items = list(node, at: "products") else { return [] }
        var products: [ProductConfiguration] = []
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "products[\(index)]"
            if item.isNull {
                fail(path, "expected a product mapping, found null", at: item)
                continue
            }
            guard let entry = fields(item, at: path, allowed: Self.productKeys) else { continue }
            let name = requiredString(entry, "name")
            if let name {
                productNames.insert(name)
                if let first = seen[name] {
                    fail(entry.path("name"), "duplicate product name '\(name)' (also products[\(first)])", at: entry["name"])
                } else {
                    seen[name] = index
                }
            }
            let hardware: HardwareType?
            if let node = entry["hardware"], !node.isNull {
                hardware = enumeration(HardwareType.self, node, at: entry.path("hardware"))
            } else {
                fail(
                    entry.path("hardware"), "is required (\(HardwareType.allCases.map(\.rawValue).joined(separator: " | ")))",
                    at: entry["hardware"])
                hardware = nil
            }
            let capabilities = capabilities(entry)
            let autoRegister = bool(entry["auto_register"], at: entry.path("auto_register")) ?? false
            let options = setupOptions(entry)
            var decoder = placementDecoder(entry["placement_decoder"], at: entry.path("placement_decoder"))
            let descriptor: DiscoveryDescriptor?
            if let node = entry["descriptor"], !node.isNull {
                descriptor = self.descriptor(node, at: entry.path("descriptor"))
            } else {
                fail(entry.path("descriptor"), "is required: how the picker recognises this product", at: entry["descriptor"])
                descriptor = nil
            }
            if case var .rule(rule)? = decoder, let descriptor {
                // The rule reads the data of the product's company or service, named by its descriptor.
                switch rule.source {
                case .manufacturer:
                    rule.source = .manufacturer(companyIdentifier: descriptor.bluetoothCompanyIdentifier)
                case .service:
                    // Service data is looked up by the descriptor's service UUID; without one the rule never sees a byte.
                    if descriptor.bluetoothServiceUUID == nil {
                        fail(
                            "\(entry.path("placement_decoder")).rule.source", "source: service needs descriptor.bluetooth_service_uuid",
                            at: entry["placement_decoder"])
                    }
                    rule.source = .service(descriptor.bluetoothServiceUUID)
                }
                decoder = .rule(rule)
            }
            guard let name, let hardware, let descriptor else { continue }
            let product = Product(
                name: name, hardware: hardware, capabilities: capabilities, autoRegister: autoRegister, setupOptions: options,
                descriptor: descriptor)
            products.append(ProductConfiguration(product: product, placementDecoder: decoder ?? .none))
            productIndices.append(index)
        }
        return products
    }

    /// `capabilities`, default `[audioSwitching, placement]`.
    private func capabilities(_ entry: Fields) -> AccessoryControlDevice.Capabilities {
        guard let node = entry["capabilities"], !node.isNull else { return [.audioSwitching, .placement] }
        var capabilities: AccessoryControlDevice.Capabilities = []
        for (index, item) in (list(node, at: entry.path("capabilities")) ?? []).enumerated() {
            let path = "\(entry.path("capabilities"))[\(index)]"
            guard let text = string(item, at: path) else { continue }
            if let capability = AccessoryControlDevice.Capabilities(name: text) {
                capabilities.insert(capability)
            } else {
                let allowed = AccessoryControlDevice.Capabilities.allNames
                var message = "unknown capability '\(text)'; allowed: \(allowed.joined(separator: ", "))"
                if let suggestion = Self.suggestion(for: text, among: allowed) {
                    message += " (did you mean '\(suggestion)'?)"
                }
                fail(path, message, at: item)
            }
        }
        return capabilities
    }

    /// The spellings of `Product.SetupOptions`.
    private enum SetupOptionName: String, CaseIterable {
        case rename
        case confirmAuthorization
        case finishInApp

        var option: Product.SetupOptions {
            switch self {
            case .rename: .rename
            case .confirmAuthorization: .confirmAuthorization
            case .finishInApp: .finishInApp
            }
        }
    }

    private func setupOptions(_ entry: Fields) -> Product.SetupOptions {
        var options: Product.SetupOptions = []
        for (index, item) in (list(entry["setup_options"], at: entry.path("setup_options")) ?? []).enumerated() {
            if let name = enumeration(SetupOptionName.self, item, at: "\(entry.path("setup_options"))[\(index)]") {
                options.insert(name.option)
            }
        }
        return options
    }

    /// The spellings of a rule's `source`.
    private enum RuleSourceName: String, CaseIterable {
        case manufacturer
        case service
    }

    /// `apple_proximity`, `none`, or `{rule: {source, offset, mask, worn_when}}`. A rule's source
    /// names no company or service yet: the product's descriptor fills it in.
    func placementDecoder(_ node: YAMLNode?, at path: String) -> PlacementDecoder? {
        guard let node, !node.isNull else { return PlacementDecoder.none }
        if let scalar = node.scalar {
            switch scalar.value {
            case "apple_proximity": return .appleProximity
            case "none": return PlacementDecoder.none
            default:
                var message = "unknown decoder '\(scalar.value)'; allowed: apple_proximity, none, or a mapping {rule: {...}}"
                if let suggestion = Self.suggestion(for: scalar.value, among: ["apple_proximity", "none"]) {
                    message += " (did you mean '\(suggestion)'?)"
                }
                fail(path, message, at: node)
                return nil
            }
        }
        guard let outer = fields(node, at: path, allowed: ["rule"]) else { return nil }
        guard let ruleNode = outer["rule"], !ruleNode.isNull else {
            fail(outer.path("rule"), "is required: {source: manufacturer|service, offset, mask, worn_when}", at: node)
            return nil
        }
        guard let rule = fields(ruleNode, at: outer.path("rule"), allowed: ["source", "offset", "mask", "worn_when"]) else { return nil }
        var missing = false
        for key in ["source", "offset", "mask", "worn_when"] where rule[key] == nil || rule[key]?.isNull == true {
            fail(rule.path(key), "is required", at: ruleNode)
            missing = true
        }
        let source = enumeration(RuleSourceName.self, rule["source"], at: rule.path("source"))
        let offset = integer(rule["offset"], at: rule.path("offset"), in: 0...255)
        let mask = integer(rule["mask"], at: rule.path("mask"), in: 1...0xFF, hex: true)
        let worn = integer(rule["worn_when"], at: rule.path("worn_when"), in: 0...0xFF, hex: true)
        guard !missing, let source, let offset, let mask, let worn else { return nil }
        guard worn & ~mask == 0 else {
            fail(
                rule.path("worn_when"), "has bits outside mask (0x\(String(mask, radix: 16))); it could never match", at: rule["worn_when"])
            return nil
        }
        let spelled: PlacementDecoder.Rule.Source =
            switch source {
            case .manufacturer: .manufacturer(companyIdentifier: nil)
            case .service: .service(nil)
            }
        return .rule(.init(source: spelled, offset: offset, mask: UInt8(mask), wornWhen: UInt8(worn)))
    }

    // MARK: descriptor

    static let descriptorKeys = [
        "bluetooth_company_identifier", "bluetooth_manufacturer_data_blob", "bluetooth_manufacturer_data_mask",
        "bluetooth_service_uuid", "bluetooth_service_data_blob", "bluetooth_service_data_mask",
        "bluetooth_name_substring", "bluetooth_name_compare", "bluetooth_range", "ssid", "ssid_prefix", "supported_options",
    ]

    /// The spellings of `DiscoveryDescriptor.NameCompare`.
    private enum NameCompareName: String, CaseIterable {
        case literal
        case caseInsensitive
    }

    /// The spellings of `DiscoveryDescriptor.Range`.
    private enum RangeName: String, CaseIterable {
        case `default`
        case immediate
    }

    /// The spellings of `DiscoveryDescriptor.SupportedOptions`.
    private enum SupportedOptionName: String, CaseIterable {
        case bluetoothPairingLE
        case bluetoothTransportBridging
        case bluetoothHID

        var option: DiscoveryDescriptor.SupportedOptions {
            switch self {
            case .bluetoothPairingLE: .bluetoothPairingLE
            case .bluetoothTransportBridging: .bluetoothTransportBridging
            case .bluetoothHID: .bluetoothHID
            }
        }
    }

    /// Reads the fields only; the rules between them are `DiscoveryDescriptor.validate(against:)`'s,
    /// which the loader runs afterwards through `EngineConfiguration.validate()`.
    func descriptor(_ node: YAMLNode, at path: String) -> DiscoveryDescriptor? {
        guard let entry = fields(node, at: path, allowed: Self.descriptorKeys) else { return nil }
        let before = issues.count
        var descriptor = DiscoveryDescriptor()
        if let company = integer(
            entry["bluetooth_company_identifier"], at: entry.path("bluetooth_company_identifier"), in: 0...0xFFFF, hex: true)
        {
            descriptor.bluetoothCompanyIdentifier = UInt16(company)
        }
        descriptor.bluetoothManufacturerDataBlob = hexBytes(
            entry["bluetooth_manufacturer_data_blob"], at: entry.path("bluetooth_manufacturer_data_blob"))
        descriptor.bluetoothManufacturerDataMask = hexBytes(
            entry["bluetooth_manufacturer_data_mask"], at: entry.path("bluetooth_manufacturer_data_mask"))
        descriptor.bluetoothServiceUUID = uuid(entry["bluetooth_service_uuid"], at: entry.path("bluetooth_service_uuid"))
        descriptor.bluetoothServiceDataBlob = hexBytes(entry["bluetooth_service_data_blob"], at: entry.path("bluetooth_service_data_blob"))
        descriptor.bluetoothServiceDataMask = hexBytes(entry["bluetooth_service_data_mask"], at: entry.path("bluetooth_service_data_mask"))
        // Empty name and ssid values are kept: the descriptor rules report them with their own messages.
        descriptor.bluetoothNameSubstring = string(entry["bluetooth_name_substring"], at: entry.path("bluetooth_name_substring"))
        if let compare = enumeration(NameCompareName.self, entry["bluetooth_name_compare"], at: entry.path("bluetooth_name_compare")) {
            descriptor.bluetoothNameCompare = compare == .literal ? .literal : .caseInsensitive
        }
        if let range = enumeration(RangeName.self, entry["bluetooth_range"], at: entry.path("bluetooth_range")) {
            descriptor.bluetoothRange = range == .default ? .default : .immediate
        }
        descriptor.ssid = string(entry["ssid"], at: entry.path("ssid"))
        descriptor.ssidPrefix = string(entry["ssid_prefix"], at: entry.path("ssid_prefix"))
        for (index, item) in (list(entry["supported_options"], at: entry.path("supported_options")) ?? []).enumerated() {
            if let option = enumeration(SupportedOptionName.self, item, at: "\(entry.path("supported_options"))[\(index)]") {
                descriptor.supportedOptions.insert(option.option)
            }
        }
        // A descriptor with a field we could not read would give misleading rule errors (e.g. "blob needs mask"
        // when the mask was bad hex), so it is left out of the rule check.
        return issues.count == before ? descriptor : nil
    }
}
