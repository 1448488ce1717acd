import Foundation
import ObjectStore

/// One write of one object, as the server's change log recorded it.
///
/// ## Topics
/// - ``cursor``
/// - ``entity``
/// - ``object``
/// - ``kind``
/// - ``version``
/// - ``changedProperties``
/// - ``values``
package struct ServerChange: Sendable, Hashable {
    /// What the write did to the object.
    package enum Kind: String, Sendable, Hashable {
        case insert, update, delete
        /// The object is no longer visible to this role (row-level security: it was
        /// unshared, or moved under an object this role does not see): the store drops it,
        /// and sends no delete.
        case hide

        /// Whether the change takes the object away (a delete or a hide): it has no row.
        var removes: Bool { self == .delete || self == .hide }
    }

    /// Where the change stands in the log.
    package var cursor: ServerCursor
    /// The name of the object's entity.
    package var entity: String
    /// The object's global ID.
    package var object: UUID
    package var kind: Kind
    /// The object's version after the change: 1 for an insert, one more on each update and
    /// on the delete.
    ///
    /// Writes of one object are serialized by its row lock, so its versions follow commit
    /// order. The log's order does not always: a transaction that took its ID first may
    /// commit second. A reader keeps, per object, the highest version it applied and skips
    /// a change with a version no higher; since each change carries the whole row
    /// (``values``), the newest version holds the effect of every older one.
    package var version: Int64
    /// The attributes and to-one relationships this write changed (all of them for an
    /// insert; none for a delete).
    package var changedProperties: [String]
    /// The object's attributes and stored to-one relationships after the write (a to-one
    /// relationship as the destination's global ID in a `Value.string`, or
    /// `Value.null`); empty for a delete.
    package var values: [String: Value]
    /// Why this model cannot take the change as the server wrote it (an unknown entity or
    /// operation, a value of another type, a row over the size limits), or nil: such a
    /// change is read all the same, so that the cursor moves past it, and the merge refuses it.
    var problem: RowImage.Unreadable?
    /// ``values`` as JSON, for the store to keep as the object's base without writing it
    /// again: a pulled change's row image as the log holds it (the whole row, written the
    /// way ``RowImage/json(_:)`` writes a base; columns of a newer model in it are left out
    /// when it is read), or a snapshot's row made with the page, beside its reading, so
    /// that the store's writer does not make a million of them. Nil when neither was made.
    var valuesJSON: String?

    package init(cursor: ServerCursor, entity: String, object: UUID, kind: Kind, version: Int64, changedProperties: [String], values: [String: Value]) {
        self.cursor = cursor
        self.entity = entity
        self.object = object
        self.kind = kind
        self.version = version
        self.changedProperties = changedProperties
        self.values = values
    }
}
