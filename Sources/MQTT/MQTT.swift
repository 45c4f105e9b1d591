import CMosquitto
/// Placeholder; the client is being written.
public enum MQTTModule {}
