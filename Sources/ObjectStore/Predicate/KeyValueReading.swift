/// What predicates and sort descriptors read from an object when they are evaluated in
/// memory: attribute values, and the objects at the other end of relationships.
///
/// ``ManagedObject`` conforms; so can any type of yours that you want to filter or sort
/// with the same predicates the store runs in SQL.
public protocol KeyValueReading {
    /// The value of the attribute `key`; ``Value/null`` when it is nil or unknown.
    func attributeValue(forKey key: String) -> Value
    /// The objects related through `key`: none or one for a to-one relationship, all of
    /// them for a to-many relationship.
    func relatedObjects(forKey key: String) -> [any KeyValueReading]
    /// The ID of the object, which `SELF` in a predicate stands for; nil (the default)
    /// for an object without one, which `SELF == %@` and `SELF IN %@` never match.
    var evaluatedObjectID: ObjectID? { get }
}

extension KeyValueReading {
    public var evaluatedObjectID: ObjectID? { nil }
}
