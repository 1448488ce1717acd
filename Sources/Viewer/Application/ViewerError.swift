/// Why the viewer could not do something, in words that say what to do.
nonisolated package struct ViewerError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
