/// The domain: AccessorySetupKit session and AudioAccessoryKit registry as a pure state machine.
public enum AccessoryKitModule {}
