import Bridge
print("aabridge \(BridgeModule.version)")
