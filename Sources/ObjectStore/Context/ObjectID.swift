import Synchronization

/// The identity of an object, stable across contexts and safe to pass between threads.
///
/// An inserted object has a temporary ID until its context saves; it then gets the
/// permanent ID of its row (`Team/12`). Use ``ObjectContext/object(with:)`` to get the
/// object an ID names in a given context.
public struct ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    enum Key: Hashable, Sendable {
        case permanent(Int64)
        case temporary(Int64)
    }

    /// The name of the object's entity.
    public let entityName: String
    let key: Key

    init(entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.key = .permanent(primaryKey)
    }

    private static let temporaryCounter = Atomic<Int64>(0)

    static func makeTemporary(entityName: String) -> ObjectID {
        let number = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ObjectID(entityName: entityName, key: .temporary(number))
    }

    static func temporary(entityName: String, number: Int64) -> ObjectID {
        ObjectID(entityName: entityName, key: .temporary(number))
    }

    private init(entityName: String, key: Key) {
        self.entityName = entityName
        self.key = key
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The row's primary key, for a permanent ID.
    public var primaryKey: Int64? {
        if case .permanent(let pk) = key { return pk }
        return nil
    }

    /// The object's row key: its primary key when saved, a negative number while it is
    /// unsaved. Compact storage for long lists of IDs of one entity (a fetched results
    /// controller keeps a million of them); ``init(entityName:rowKey:)`` turns it back.
    public var rowKey: Int64 { sqlKey }

    /// The ID of a ``rowKey`` of `entityName`.
    public init(entityName: String, rowKey: Int64) {
        self.init(entityName: entityName, sqlKey: rowKey)
    }

    /// The key the object's row has in SQL: its primary key, or, for a temporary ID while
    /// pending changes are written into a transaction that is rolled back, a negative key
    /// that no saved row has.
    var sqlKey: Int64 {
        switch key {
        case .permanent(let pk): return pk
        case .temporary(let n): return -n
        }
    }

    /// The order of rows that sort alike: saved objects by primary key, then unsaved ones in
    /// the order they were inserted (which is the order their saved keys will have).
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        switch (lhs.key, rhs.key) {
        case (.permanent(let a), .permanent(let b)): return a < b
        case (.temporary(let a), .temporary(let b)): return a < b
        case (.permanent, .temporary): return true
        case (.temporary, .permanent): return false
        }
    }

    /// The SQL ordering terms that give ``<`` on rows of `alias`: the primary key alone
    /// when no unsaved rows are in the table, else saved rows first.
    static func sqlOrderingTerms(alias: String, withUnsavedRows: Bool) -> String {
        let key = "\(alias).\(Schema.primaryKey)"
        return withUnsavedRows ? "\(key) < 0, abs(\(key))" : key
    }

    /// `Entity/12` for a saved object, `Entity/t3` for a temporary one.
    public var description: String {
        switch key {
        case .permanent(let pk): return "\(entityName)/\(pk)"
        case .temporary(let n): return "\(entityName)/t\(n)"
        }
    }

    /// Parses a permanent ID's ``description`` (`Team/12`).
    public init?(string: String) {
        let parts = string.split(separator: "/")
        guard parts.count == 2, let pk = Int64(parts[1]) else { return nil }
        self.init(entityName: String(parts[0]), primaryKey: pk)
    }
}
