import AccessoryKit
import Configuration

/// What is said and done once the session is activated: the configuration's warnings (the
/// ones `validate` lists) said once in the log, the file's keys that cannot be used (their
/// accessory is not paired), and the removal of the example accessory an earlier shipped file
/// planted (``ShippedPhantom``).
final class StartupChecks: RuntimeComponent {
    private let configuration: BridgeConfiguration

    init(configuration: BridgeConfiguration) { self.configuration = configuration }

    func start(_ context: ComponentContext) async {
        let engine = context.engine.engine
        for warning in configuration.warnings { context.logger.warning("configuration: \(warning)") }
        // The file's keys are applied at every start, but only to accessories that are paired.
        for (index, entry) in configuration.accessories.enumerated()
        where !entry.keys.isEmpty && engine.status(of: entry.migration.id) == nil {
            context.logger.warning(
                "accessories[\(index)]: \(entry.migration.id) is not paired (removed, or added to the file after the first start), "
                    + "so its keys are not used; pair it from the picker with \(RequestName.selectCandidate.name), then set them with \(RequestName.keys.name)"
            )
        }
        // Only its owner removes it: a single bridge. In a cluster nothing is owned yet at
        // activation, so no instance does (the example predates cluster mode).
        if let phantom = ShippedPhantom.find(in: engine, configuration: configuration), context.owns(phantom) {
            await removeShippedPhantom(phantom, context)
        }
    }

    /// Removes the accessory an earlier config/aabridge.yaml planted, as `accessory/remove`
    /// would; when it cannot be stored, the next start tries again.
    private func removeShippedPhantom(_ id: BluetoothAddress, _ context: ComponentContext) async {
        if let error = await context.perform(.request(.remove(id), name: RequestName.remove.name)).notStored {
            context.logger.warning("could not remove \(ShippedPhantom.name) (\(id)), the example accessory: \(error.message)")
        } else {
            context.logger.info(
                "removed \(ShippedPhantom.name) (\(id)): the example accessory an earlier config/aabridge.yaml migrated into "
                    + "this database, still as the file planted it (no new name, key, source or followed address); the file no longer lists it"
            )
        }
    }
}
