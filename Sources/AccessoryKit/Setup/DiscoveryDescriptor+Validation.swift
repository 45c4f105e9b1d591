extension DiscoveryDescriptor {
    /// Every broken rule at once (Apple's app would crash on the first; the bridge
    /// reports them all and refuses to start).
    /// - Parameter declaration: the setup declaration; nil checks the descriptor alone.
    public func validate(against declaration: SetupDeclaration?) -> [DescriptorError] {
        var errors: [DescriptorError] = []
        func fail(_ field: String, _ rule: DescriptorError.Rule, _ message: String) {
            errors.append(DescriptorError(field: field, rule: rule, message: message))
        }
        let hasIdentifier = bluetoothCompanyIdentifier != nil || bluetoothServiceUUID != nil

        if !usesBluetooth && !usesWiFi {
            fail("descriptor", .emptyDescriptor, "a descriptor needs Bluetooth or Wi-Fi fields")
        }
        if usesBluetooth && !hasIdentifier {
            fail(
                "bluetooth_company_identifier", .bluetoothNeedsIdentifier,
                "a Bluetooth descriptor needs bluetooth_company_identifier or bluetooth_service_uuid")
        }
        if let name = bluetoothNameSubstring {
            if !hasIdentifier {
                fail(
                    "bluetooth_name_substring", .nameSubstringNeedsIdentifier,
                    "bluetooth_name_substring needs bluetooth_company_identifier or bluetooth_service_uuid")
            }
            if name.isEmpty {
                fail("bluetooth_name_substring", .nameSubstringEmpty, "bluetooth_name_substring must not be empty")
            }
        }
        checkBlob(
            blob: bluetoothManufacturerDataBlob, mask: bluetoothManufacturerDataMask,
            names: ("bluetooth_manufacturer_data_blob", "bluetooth_manufacturer_data_mask"),
            rules: (.manufacturerBlobWithoutMask, .manufacturerMaskWithoutBlob, .manufacturerBlobMaskLength), fail: fail)
        if (bluetoothManufacturerDataBlob != nil || bluetoothManufacturerDataMask != nil) && bluetoothCompanyIdentifier == nil {
            fail(
                "bluetooth_company_identifier", .manufacturerDataNeedsCompanyIdentifier,
                "manufacturer data blob and mask need bluetooth_company_identifier")
        }
        checkBlob(
            blob: bluetoothServiceDataBlob, mask: bluetoothServiceDataMask,
            names: ("bluetooth_service_data_blob", "bluetooth_service_data_mask"),
            rules: (.serviceBlobWithoutMask, .serviceMaskWithoutBlob, .serviceBlobMaskLength), fail: fail)
        if (bluetoothServiceDataBlob != nil || bluetoothServiceDataMask != nil) && bluetoothServiceUUID == nil {
            fail("bluetooth_service_uuid", .serviceDataNeedsServiceUUID, "service data blob and mask need bluetooth_service_uuid")
        }
        if ssid != nil && ssidPrefix != nil {
            fail("ssid_prefix", .ssidAndPrefix, "give ssid or ssid_prefix, not both")
        }
        if ssid?.isEmpty == true { fail("ssid", .ssidEmpty, "ssid must not be empty") }
        if ssidPrefix?.isEmpty == true { fail("ssid_prefix", .ssidPrefixEmpty, "ssid_prefix must not be empty") }

        guard let declaration else { return errors }
        if usesBluetooth && !declaration.supports.contains(.bluetooth) {
            fail(firstBluetoothField, .bluetoothNotDeclared, "the descriptor uses Bluetooth but setup.supports does not declare bluetooth")
        }
        if usesWiFi && !declaration.supports.contains(.wifi) {
            fail(
                ssid != nil ? "ssid" : "ssid_prefix", .wifiNotDeclared, "the descriptor uses Wi-Fi but setup.supports does not declare wifi"
            )
        }
        if let company = bluetoothCompanyIdentifier, !declaration.bluetoothCompanyIdentifiers.contains(company) {
            fail(
                "bluetooth_company_identifier", .companyIdentifierNotDeclared,
                "company identifier 0x\(Hex.encode([UInt8(company >> 8), UInt8(company & 0xFF)], uppercase: true)) is not in setup.bluetooth.company_identifiers"
            )
        }
        if let service = bluetoothServiceUUID, !declaration.bluetoothServices.contains(service) {
            fail("bluetooth_service_uuid", .serviceUUIDNotDeclared, "service \(service) is not in setup.bluetooth.services")
        }
        if let name = bluetoothNameSubstring, !name.isEmpty, !declaration.bluetoothNames.contains(name) {
            fail("bluetooth_name_substring", .nameSubstringNotDeclared, "name '\(name)' is not in setup.bluetooth.names")
        }
        return errors
    }

    private var firstBluetoothField: String {
        if bluetoothCompanyIdentifier != nil { return "bluetooth_company_identifier" }
        if bluetoothServiceUUID != nil { return "bluetooth_service_uuid" }
        if bluetoothNameSubstring != nil { return "bluetooth_name_substring" }
        return "supported_options"
    }

    private func checkBlob(
        blob: [UInt8]?, mask: [UInt8]?, names: (blob: String, mask: String),
        rules: (noMask: DescriptorError.Rule, noBlob: DescriptorError.Rule, length: DescriptorError.Rule),
        fail: (String, DescriptorError.Rule, String) -> Void
    ) {
        switch (blob, mask) {
        case (.some, nil): fail(names.mask, rules.noMask, "\(names.blob) needs \(names.mask)")
        case (nil, .some): fail(names.blob, rules.noBlob, "\(names.mask) needs \(names.blob)")
        case let (blob?, mask?) where blob.count != mask.count:
            fail(names.mask, rules.length, "\(names.mask) has \(mask.count) bytes, \(names.blob) has \(blob.count)")
        default: break
        }
    }
}
