/// SQLite storage for accessories, registrations and sources.
public enum StorageModule {}
