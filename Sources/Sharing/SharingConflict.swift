import Foundation
import ObjectStore

/// An edit of a shared object that met another desktop's edit of the same field (or the
/// object's delete), and what became of it.
///
/// A field conflicts when this store changed it and the server holds a third value: neither
/// the one the edit started from nor the edited one. The ``PostgresSharing/mergePolicy``
/// decides: `MergePolicy.error` (the default) and `MergePolicy.storeWins` keep the
/// server's value, the first one committed, everywhere (``Resolution/tookServer``);
/// `MergePolicy.editWins` writes this store's value over it (``Resolution/keptLocal``). An
/// object deleted on another desktop while it had edits here is deleted here too
/// (``Resolution/deleted``): an edit does not bring an object back. Every conflict is recorded
/// in the store until dismissed (``SharingSession/conflicts()``), whatever the policy, so
/// that a person can see what was not kept and set it again.
///
/// ## Topics
/// - ``Resolution``
/// - ``objectID``
/// - ``keys``
/// - ``details``
public struct SharingConflict: Sendable, Hashable, CustomStringConvertible {
    /// What was kept.
    public enum Resolution: String, Sendable, Hashable {
        /// The server's values of the conflicting fields were taken; this store's edits of
        /// them were dropped.
        case tookServer = "server"
        /// This store's values were written over the server's.
        case keptLocal = "local"
        /// The object was deleted on the server; this store's edits of it were dropped.
        case deleted
    }

    /// The conflict's number in the store's list (nil before it is recorded).
    public var number: Int64?
    /// When it was found.
    public var time: Date
    /// The object's entity.
    public var entity: String
    /// The object's global ID.
    public var globalID: UUID
    /// The object in this store, when it still has it.
    public var objectID: ObjectID?
    /// The attributes and relationships that conflicted (none for a delete).
    public var keys: [String]
    /// The conflicting values, as a sentence per field.
    public var details: String
    public var resolution: Resolution

    public init(number: Int64? = nil, time: Date = Date(), entity: String, globalID: UUID, objectID: ObjectID?, keys: [String],
                details: String, resolution: Resolution) {
        self.number = number
        self.time = time
        self.entity = entity
        self.globalID = globalID
        self.objectID = objectID
        self.keys = keys
        self.details = details
        self.resolution = resolution
    }

    /// `Team 3F2A…: wins is 5 on the server (…); kept the server's value`.
    public var description: String {
        let what: String
        switch resolution {
        case .tookServer: what = "kept the server's value"
        case .keptLocal: what = "wrote this store's value over it"
        case .deleted: what = "the object is deleted"
        }
        return "\(entity) \(globalID.uuidString.lowercased()): \(details); \(what)"
    }
}
