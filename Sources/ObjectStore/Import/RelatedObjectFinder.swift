import GRDB

/// Finds the destination of a to-one column for one chunk of an import: the object whose
/// key attribute (the destination's first string attribute) has the column's value, among
/// the saved rows and, for a relationship to the imported entity itself, the records of the
/// chunk not saved yet. Answers are cached for the chunk only, so that rows deleted by
/// someone else meanwhile are not linked to in the next chunk.
final class RelatedObjectFinder {
    private let context: ObjectContext
    private var saved: [String: [Value: [ObjectID]]] = [:]
    /// Records of the chunk by the value of their key attribute, for relationships to their
    /// own entity.
    private var unsaved: [Value: [ManagedObject]] = [:]
    private let imported: (entity: String, keyAttribute: String)?

    /// A finder for records inserted into `context`; `imported` is the imported entity and
    /// its key attribute when one of its imported relationships points back to it.
    init(context: ObjectContext, imported: (entity: String, keyAttribute: String)?) {
        self.context = context
        self.imported = imported
    }

    /// The object `relationship` should point to; throws a problem description when no
    /// object or more than one has `value`.
    func destination(of relationship: RelationshipDescription, keyAttribute: String, value: Value) throws -> ManagedObject {
        let destination = relationship.destinationEntity
        var matches: [ManagedObject] = []
        if destination == imported?.entity {
            matches += unsaved[value] ?? []
        }
        let ids: [ObjectID]
        if let cached = saved[relationship.name]?[value] {
            ids = cached
        } else {
            let sql = "SELECT \(Schema.primaryKey) FROM \(destination.quotedDatabaseIdentifier) WHERE \(keyAttribute.quotedDatabaseIdentifier) = ? ORDER BY \(Schema.primaryKey) LIMIT 2"
            ids = try context.store.database.read { db in
                try Int64.fetchAll(db, sql: sql, arguments: [value.databaseValue])
            }.map { ObjectID(entityName: destination, primaryKey: $0) }
            saved[relationship.name, default: [:]][value] = ids
        }
        matches += try ids.map { try context.registeredObject(with: $0) }
        guard matches.count == 1 else {
            throw Problem(matches.isEmpty
                ? "no \(destination) has the \(keyAttribute) \(value); give the \(keyAttribute) of an existing \(destination) (import the \(destination) objects first)"
                : "more than one \(destination) has the \(keyAttribute) \(value), so the import cannot tell which one is meant; make the \(keyAttribute)s of \(destination) unique")
        }
        return matches[0]
    }

    /// Makes a record of the chunk findable by the later records of the chunk.
    func didInsert(_ object: ManagedObject) {
        guard let imported else { return }
        let value = object.attributeValue(forKey: imported.keyAttribute)
        if !value.isNull { unsaved[value, default: []].append(object) }
    }

    /// Why a destination cannot be found.
    struct Problem: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}
