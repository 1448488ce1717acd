/// A misuse of the object graph through key-value access or object IDs: what went wrong
/// and what to do. Nothing in the context changes when one of these is thrown.
public struct ContextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    ///
    /// A struct, not an enum, as GRDB's `ResultCode` and postgres-nio's `PSQLError.Code`:
    /// new kinds come without breaking a caller's `switch` (which needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The entity has no property with that name.
        public static let unknownKey = Kind("unknownKey")
        /// The value does not fit the property's type.
        public static let wrongType = Kind("wrongType")
        /// The model has no entity with that name, or the ID names no row.
        public static let unknownObject = Kind("unknownObject")
        /// The object was deleted, or belongs to another context.
        public static let unavailableObject = Kind("unavailableObject")

        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }
    }

    public var kind: Kind
    /// The entity concerned, when one is.
    public var entity: String?
    /// The property concerned, when one is.
    public var key: String?
    /// The object concerned, when one is.
    public var objectID: ObjectID?
    /// What is wrong and what to do.
    public var message: String

    init(_ kind: Kind, entity: String? = nil, key: String? = nil, objectID: ObjectID? = nil, _ message: String) {
        self.kind = kind
        self.entity = entity ?? objectID?.entityName
        self.key = key
        self.objectID = objectID
        self.message = message
    }

    public var description: String { message }

    static func unknownKey(_ key: String, in entity: EntityDescription) -> ContextError {
        ContextError(.unknownKey, entity: entity.name, key: key, "\(entity.name) has no property '\(key)'; its properties are \(entity.propertyNames.joined(separator: ", "))")
    }
}

/// Why a save was refused: every failed check, each naming the object and property.
///
/// The context keeps every unsaved change when a save fails, so the person can fix the
/// values and save again.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One failed check.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        public var objectID: ObjectID
        /// The property at fault, or nil for a check on the whole object.
        public var key: String?
        public var message: String

        public init(objectID: ObjectID, key: String?, message: String) {
            self.objectID = objectID
            self.key = key
            self.message = message
        }

        public var description: String {
            "\(objectID)\(key.map { ".\($0)" } ?? ""): \(message)"
        }
    }

    public var failures: [Failure]

    public init(failures: [Failure]) { self.failures = failures }

    /// A failure for a validator closure to throw: `throw ValidationError(key: "name", "needs a name")`.
    /// The context fills in the object's ID.
    public init(key: String?, _ message: String) {
        self.failures = [Failure(objectID: ObjectID(entityName: "", primaryKey: 0), key: key, message: message)]
    }

    public var description: String {
        failures.count == 1 ? "cannot save: \(failures[0])"
            : "cannot save, \(failures.count) problems:\n" + failures.map { "- \($0)" }.joined(separator: "\n")
    }
}
