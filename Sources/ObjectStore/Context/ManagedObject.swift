import Foundation

/// What an object holds for one property: an attribute value, or the ID at the other end of
/// a to-one relationship whose key the object's row stores.
enum StoredValue: Hashable {
    case attribute(Value)
    case object(ObjectID?)
}

/// An object of the graph: one row of an entity's table, registered in one ``ObjectContext``.
///
/// Read and write properties by key (``value(forKey:)``, ``setValue(_:forKey:)``) for
/// entities defined in a JSON model, or subclass it and declare typed properties:
///
/// ```swift
/// final class Team: ManagedObject {
///     @Attribute var teamName: String
///     @Attribute var wins: Int
/// }
/// team.wins += 1   // tracked like setValue(_:forKey:)
/// ```
///
/// An object fetched by ID or by a batched fetch is a fault: its values load on first access.
///
/// ## Topics
/// - ``objectID``
/// - ``entity``
/// - ``managedObjectContext``
/// - ``isInserted``
/// - ``isUpdated``
/// - ``isDeleted``
/// - ``isFault``
/// - ``changedValues()``
/// - ``committedValues(forKeys:)``
open class ManagedObject: KeyValueReading, Hashable, CustomStringConvertible {
    /// The entity this object belongs to.
    public let entity: EntityDescription
    /// The object's identity; temporary until its first save.
    public internal(set) var objectID: ObjectID
    /// The temporary ID the object had before its first save, once saved.
    public internal(set) var temporaryObjectID: ObjectID?
    /// The context the object lives in; nil once it is deleted and saved, or forgotten.
    public internal(set) weak var managedObjectContext: ObjectContext?

    /// Saved values of attributes and stored to-one keys; nil while the object is a fault.
    var committed: [String: StoredValue]?
    /// Values set since the last save.
    var changes: [String: StoredValue] = [:]
    /// For each key of ``changes`` of an object saved before: the saved value the change
    /// started from. A save compares it with the row to find what was changed elsewhere
    /// meanwhile (see ``MergePolicy``), so it outlives merges that reload ``committed``.
    var changeBases: [String: StoredValue] = [:]
    /// Whether the object was inserted and not saved yet.
    public internal(set) var isInserted = false
    /// Whether the object was deleted and not saved yet (or deleted by a merged save).
    public internal(set) var isDeleted = false
    /// Whether property-wrapper keys have been named from this instance's reflection.
    var wrappersNamed = false

    /// Made by the context; subclasses inherit this initializer and need no other.
    public required init(entity: EntityDescription, objectID: ObjectID, context: ObjectContext?) {
        self.entity = entity
        self.objectID = objectID
        self.managedObjectContext = context
    }

    /// Inserts a new object of this class's entity into `context`.
    ///
    /// The entity is the model's entity whose ``EntityDescription/objectClass`` is this class,
    /// else the one named ``entityName``; throws ``ContextError`` when there is none.
    public convenience init(context: ObjectContext) throws {
        let entity = try context.entity(for: Self.self)
        self.init(entity: entity, objectID: ObjectID.makeTemporary(entityName: entity.name), context: context)
        context.register(inserted: self)
    }

    /// The entity name a subclass maps to by default: its own name. Override it to give the
    /// entity another name (in ``Model/init(classes:)``, and when a context looks up the
    /// entity of a class that no ``EntityDescription/objectClass`` names).
    open class var entityName: String {
        String(describing: self)
    }

    /// The indexes of this class's entity in a model derived from classes
    /// (``Model/init(classes:)``): none unless a subclass overrides it.
    ///
    /// ```swift
    /// override class var entityIndexes: [IndexDescription] {
    ///     [IndexDescription(properties: ["qualifyingZone", "-wins", "teamName"])]
    /// }
    /// ```
    open class var entityIndexes: [IndexDescription] {
        []
    }

    /// Who may see objects of this class's entity on a shared server, in a model derived
    /// from classes (``Model/init(classes:)``): nil (every role that may read its table)
    /// unless a subclass overrides it.
    ///
    /// ```swift
    /// override class var entityOwnership: Ownership? {
    ///     .owner(attribute: "owner", sharedAttribute: "shared")
    /// }
    /// ```
    open class var entityOwnership: Ownership? {
        nil
    }

    /// Whether the object has unsaved changes to its properties (and is not inserted or deleted).
    public var isUpdated: Bool { !changes.isEmpty && !isInserted && !isDeleted }

    /// Whether the object's values have not been loaded yet.
    public var isFault: Bool { committed == nil && !isInserted }

    /// Whether the object has unsaved changes of any kind.
    public var hasChanges: Bool { isInserted || isDeleted || !changes.isEmpty }

    // MARK: Key-value access

    /// The value of a property: an attribute's value (`String`, `Int`, `Double`, `Bool`,
    /// `Date`, `Data` or nil), a to-one relationship's object, or a to-many relationship's
    /// objects as an array in key order.
    public func value(forKey key: String) throws -> Any? {
        if entity.attribute(named: key) != nil { return try context().attributeValue(of: self, key: key).anyValue }
        if let relationship = entity.relationship(named: key) {
            let context = try context()
            return relationship.isToMany
                ? try context.relatedObjects(of: self, relationship: relationship)
                : try context.relatedObjects(of: self, relationship: relationship).first
        }
        throw ContextError.unknownKey(key, in: entity)
    }

    /// Sets a property. Attributes take Swift values of their type (or nil); to-one
    /// relationships an object of the destination entity (or nil); to-many relationships an
    /// array or a set of them. A value of the wrong type throws ``ContextError`` and changes
    /// nothing.
    public func setValue(_ value: Any?, forKey key: String) throws {
        let context = try context()
        if let attribute = entity.attribute(named: key) {
            guard let converted = Value(value)?.converted(to: attribute.type) else {
                throw ContextError(.wrongType, entity: entity.name, key: key, objectID: objectID, "\(entity.name).\(key) takes a \(attribute.type) value, not \(value.map { "\(type(of: $0)) \($0)" } ?? "nil")")
            }
            try context.setAttribute(converted, of: self, key: key)
        } else if let relationship = entity.relationship(named: key) {
            if relationship.isToMany {
                // A set in key order: the changes it makes come in the same order every run.
                guard let objects = value as? [ManagedObject]
                    ?? (value as? Set<ManagedObject>)?.sorted(by: { $0.objectID < $1.objectID })
                    ?? (value == nil ? [] : nil) else {
                    throw ContextError(.wrongType, entity: entity.name, key: key, objectID: objectID, "\(entity.name).\(key) is to-many; give an array or a set of \(relationship.destinationEntity) objects")
                }
                try context.setRelatedObjects(objects, of: self, relationship: relationship)
            } else {
                guard value == nil || value is ManagedObject else {
                    throw ContextError(.wrongType, entity: entity.name, key: key, objectID: objectID, "\(entity.name).\(key) takes a \(relationship.destinationEntity) object or nil, not \(type(of: value!))")
                }
                try context.setRelatedObject(value as? ManagedObject, of: self, relationship: relationship)
            }
        } else {
            throw ContextError.unknownKey(key, in: entity)
        }
    }

    /// The attribute's value as a ``Value`` (``Value/null`` for nil, a deleted object, or an unknown key).
    public func attributeValue(forKey key: String) -> Value {
        (try? managedObjectContext?.attributeValue(of: self, key: key)) ?? .null
    }

    /// The objects related through `key` (none or one for to-one); empty on error.
    public func relatedObjects(forKey key: String) -> [any KeyValueReading] {
        guard let relationship = entity.relationship(named: key), let context = managedObjectContext else { return [] }
        return (try? context.relatedObjects(of: self, relationship: relationship)) ?? []
    }

    /// ``objectID``, which `SELF` in a predicate stands for.
    public var evaluatedObjectID: ObjectID? { objectID }

    /// The values changed since the last save, by key: attributes as Swift values, to-one
    /// relationships as ``ObjectID`` (or nil).
    public func changedValues() -> [String: Any?] {
        changes.mapValues { stored -> Any? in
            switch stored {
            case .attribute(let value): return value.anyValue
            case .object(let id): return id
            }
        }
    }

    /// The last saved values of `keys` (all attributes and stored to-one keys when nil):
    /// the old values of a change.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: Any?] {
        if isFault { try? managedObjectContext?.fulfillFaults([self]) }
        let all = committed ?? [:]
        var result: [String: Any?] = [:]
        for key in keys ?? Array(all.keys) {
            switch all[key] {
            case .attribute(let value)?: result[key] = value.anyValue
            case .object(let id)?: result[key] = id
            case nil: continue
            }
        }
        return result
    }

    func context() throws -> ObjectContext {
        guard let context = managedObjectContext else {
            throw ContextError(.unavailableObject, objectID: objectID, "\(objectID) is no longer in a context (it was deleted or its context is gone)")
        }
        return context
    }

    // MARK: Identity

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        let state = isFault ? " (fault)" : isDeleted ? " (deleted)" : ""
        return "<\(type(of: self)) \(objectID)\(state)>"
    }
}
