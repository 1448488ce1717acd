/// A problem in a model definition: what is wrong, where, and how to fix it.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is: `Entity`, `Entity.property`, or a path in a JSON model file.
    public var location: String
    /// What is wrong and what to do.
    public var reason: String

    public init(_ location: String, _ reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "\(location): \(reason)" }
}
