import Foundation

/// An error of sharing a store through PostgreSQL, with what it concerns as fields.
///
/// ## Topics
/// - ``unreadableChange(entity:object:reason:)``
/// - ``invalidURL(_:reason:)``
public enum SharingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A row of the server's change log that cannot be read at all (its transaction ID).
    /// A row that only does not fit the model is no error: it is a ``RejectedChange``.
    case unreadableChange(entity: String, object: UUID, reason: String)
    /// A server address that is not a `postgresql://` URL this library understands.
    case invalidURL(_ url: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadableChange(entity, object, reason):
            return "the server's change log has a change of \(entity) \(object) that this model cannot read (\(reason)); make every desktop use the same model, or fix the row"
        case let .invalidURL(url, reason):
            return "\(url) is not a server address this library reads (\(reason)); write postgresql://USER@HOST[:PORT]/DATABASE"
        }
    }
}
