extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
