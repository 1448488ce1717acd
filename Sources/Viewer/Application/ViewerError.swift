/// Why the viewer could not do something, in words that say what to do.
nonisolated public struct ViewerError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
