/// The answer to a request (`bridge/response/<name>`).
public enum RequestResult: Hashable, Sendable {
    /// What an ok response carries as `data`.
    public enum Data: Hashable, Sendable {
        case empty
        case accessory(Accessory)
        case configuration(AccessoryControlDevice.Configuration)
        case device(AccessoryControlDevice)
        case picker(Picker?)
        /// `accessory/keys`: which keys the accessory has now, and which byte order of its IRK
        /// matched (nil without an IRK).
        case keys(BluetoothAddress, KeyPresence, irkMatch: IRKOrder?)
        /// The accessory's state object as it is after the request (`accessory/home_sources`,
        /// `accessory/alias`).
        case state(BluetoothAddress)
        /// `source/name`: the source and the name it has now (nil: none).
        case sourceName(BluetoothAddress, String?)
    }

    case success(Data)
    case failure(RequestError)

    /// The error, if failed.
    public var error: RequestError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A request's error in either domain.
public enum RequestError: Error, Hashable, Sendable {
    case setup(SetupError)
    case accessoryControl(AccessoryControlDevice.Error)

    /// The code name (`pickerAlreadyActive`, `accessoryNotCapable`).
    public var code: String {
        switch self {
        case .setup(let error): error.code.name
        case .accessoryControl(let error): error.code.rawValue
        }
    }

    /// `ASErrorDomain` or `AccessoryControlDevice`.
    public var domain: String {
        switch self {
        case .setup: SetupError.domain
        case .accessoryControl: AccessoryControlDevice.Error.domain
        }
    }

    /// The raw ASError code; nil for AccessoryControlDevice errors.
    public var raw: Int? {
        if case .setup(let error) = self { return error.code.rawValue }
        return nil
    }

    public var message: String {
        switch self {
        case .setup(let error): error.message
        case .accessoryControl(let error): error.message
        }
    }
}
