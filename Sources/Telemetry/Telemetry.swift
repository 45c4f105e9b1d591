/// Gateway telemetry parsers: real BLE gateway payloads in, normalised sightings out.
public enum TelemetryModule {}
