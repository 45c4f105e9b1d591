import MQTT
public enum TestSupportModule {}
