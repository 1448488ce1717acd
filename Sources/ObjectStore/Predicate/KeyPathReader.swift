import GRDB

/// Reads key paths from objects in memory, as the SQL of ``PredicateSQLCompiler`` reads
/// them from rows: values in their stored form (``DatabaseValueOrdering/stored(_:)``).
enum KeyPathReader {
    /// The one value of a key path through to-one relationships: NULL when one of them is
    /// nil, the number of related objects for `@count`, and for a path that ends on a
    /// relationship, 1 when there is a related object and NULL when there is none.
    static func value(_ components: [String], of object: any KeyValueReading) -> DatabaseValue {
        guard let last = components.last else { return .null }
        if components.count >= 3, let op = CollectionOperator(rawValue: components[components.count - 2]) {
            guard let owner = Self.object(components.dropLast(3), of: object) else { return .null }
            let related = owner.relatedObjects(forKey: components[components.count - 3])
            return PredicateArithmetic.aggregate(op, related.map { DatabaseValueOrdering.stored($0.attributeValue(forKey: last)) })
        }
        let isCount = last == countComponent && components.count >= 2
        var current = object
        for key in components.dropLast(isCount ? 2 : 1) {
            guard let next = current.relatedObjects(forKey: key).first else { return .null }
            current = next
        }
        if isCount {
            return Int64(current.relatedObjects(forKey: components[components.count - 2]).count).databaseValue
        }
        let value = DatabaseValueOrdering.stored(current.attributeValue(forKey: last))
        // Without the model, a relationship looks like an attribute that is nil; it is
        // only ever compared with nil, so "there is an object" is all it needs to say.
        if value.isNull && !current.relatedObjects(forKey: last).isEmpty { return 1.databaseValue }
        return value
    }

    /// The object at the end of a path through to-one relationships; nil when one is nil.
    private static func object(_ keys: ArraySlice<String>, of object: any KeyValueReading) -> (any KeyValueReading)? {
        var current = object
        for key in keys {
            guard let next = current.relatedObjects(forKey: key).first else { return nil }
            current = next
        }
        return current
    }

    /// Every object at the end of a path through relationships of any kind (for SUBQUERY):
    /// the related objects of each step, flattened.
    static func objects(_ keys: [String], of object: any KeyValueReading) -> [any KeyValueReading] {
        keys.reduce([object]) { objects, key in objects.flatMap { $0.relatedObjects(forKey: key) } }
    }

    /// Every value at the end of a key path through relationships of any kind (for ANY,
    /// ALL and NONE): the related objects of each step, flattened.
    static func values(_ components: [String], of object: any KeyValueReading) -> [DatabaseValue] {
        guard let last = components.last else { return [] }
        var objects = [object]
        for key in components.dropLast() {
            objects = objects.flatMap { $0.relatedObjects(forKey: key) }
        }
        return objects.map { DatabaseValueOrdering.stored($0.attributeValue(forKey: last)) }
    }
}
