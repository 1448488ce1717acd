/// An object a save was about to update whose row was changed elsewhere (another process,
/// the `sqlite3` shell, another store or context on the file) since the edit began: the
/// fields both sides changed to different values, or the row deleted.
///
/// A save finds conflicts by reading the rows of the objects it updates in its own write
/// transaction, before writing anything; ``MergePolicy`` says what it does with them.
///
/// ## Topics
/// - ``objectID``
/// - ``kind``
/// - ``fields``
/// - ``isDeleted``
/// - ``Field``
/// - ``FieldValue``
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the row.
    public enum Kind: Sendable, Hashable {
        /// These fields hold values in the store that are neither the saved values the edit
        /// started from nor the edited ones.
        case fieldsChanged([Field])
        /// The row was deleted while the object had unsaved edits.
        case deleted
    }

    /// One field both sides changed, to different values.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// The attribute or to-one relationship.
        public var key: String
        /// The saved value the edit started from.
        public var baseValue: FieldValue
        /// The value in the store now.
        public var storeValue: FieldValue
        /// The value the edit sets.
        public var editedValue: FieldValue

        /// A conflict of the field `key`: the edit began from `baseValue` and sets
        /// `editedValue`, the store holds `storeValue`.
        public init(key: String, baseValue: FieldValue, storeValue: FieldValue, editedValue: FieldValue) {
            self.key = key
            self.baseValue = baseValue
            self.storeValue = storeValue
            self.editedValue = editedValue
        }

        /// `wins is 5 in the store (it was 3 when editing began; the edit sets 4)`.
        public var description: String {
            "\(key) is \(storeValue) in the store (it was \(baseValue) when editing began; the edit sets \(editedValue))"
        }
    }

    /// The value of a field: an attribute's ``Value``, or the ID of the object a to-one
    /// relationship names (nil for none).
    public enum FieldValue: Sendable, Hashable, CustomStringConvertible {
        /// An attribute's value.
        case attribute(Value)
        /// The object a to-one relationship names, or nil for none.
        case object(ObjectID?)

        /// The value as messages show it: `5`, `"Africa"`, `nil`, `Club/3`.

        public var description: String {
            switch self {
            case .attribute(let value): return value.description
            case .object(let id): return id?.description ?? "nil"
            }
        }
    }

    /// The object whose row changed.
    public var objectID: ObjectID
    /// What happened to its row.
    public var kind: Kind

    /// A conflict of the object `objectID`.
    public init(objectID: ObjectID, kind: Kind) {
        self.objectID = objectID
        self.kind = kind
    }

    /// The fields in conflict; empty for a deleted row.
    public var fields: [Field] {
        if case .fieldsChanged(let fields) = kind { return fields }
        return []
    }

    /// Whether the row was deleted.
    public var isDeleted: Bool { kind == .deleted }

    /// `Team/7 was changed elsewhere while it was being edited: wins is 5 in the store (...)`.
    public var description: String {
        switch kind {
        case .deleted:
            return "\(objectID) was deleted elsewhere while it was being edited"
        case .fieldsChanged(let fields):
            return "\(objectID) was changed elsewhere while it was being edited: " + fields.map(\.description).joined(separator: ", ")
        }
    }
}

/// Why a save was refused: objects it would update were changed or deleted elsewhere since
/// their edits began, and the ``MergePolicy`` does not settle it (``MergePolicy/error``
/// for changed fields, any policy but ``MergePolicy/storeWins`` for a deleted row).
///
/// Nothing was written, and every unsaved change stays in the context: refresh the objects
/// (``ObjectContext/refresh(_:mergeChanges:)`` without merging) to take the stored values,
/// or save again with another policy (``ObjectContext/save(mergePolicy:)``).
public struct MergeConflictError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every conflict found, in object ID order.
    public var conflicts: [MergeConflict]

    /// An error listing `conflicts`.
    public init(conflicts: [MergeConflict]) {
        self.conflicts = conflicts
    }

    /// What happened, naming the objects and fields (without the advice of ``description``,
    /// for an interface that offers its own ways out).
    public var summary: String {
        conflicts.count == 1 ? "cannot save: \(conflicts[0])"
            : "cannot save, \(conflicts.count) objects were changed elsewhere while they were being edited:\n"
                + conflicts.map { "- \($0)" }.joined(separator: "\n")
    }

    /// What happened, naming the objects and fields, and what to do.
    public var description: String {
        var advice: [String] = []
        if conflicts.contains(where: { !$0.isDeleted }) {
            advice.append("Refresh the object to take the stored values, or save with mergePolicy .editWins to overwrite them (.storeWins keeps the stored values and saves the other edits)")
        }
        if conflicts.contains(where: \.isDeleted) {
            advice.append("An edit cannot bring back a deleted row: roll back or refresh to let the object go, or insert it again as a new object")
        }
        return summary + ". " + advice.joined(separator: ". ")
    }
}
