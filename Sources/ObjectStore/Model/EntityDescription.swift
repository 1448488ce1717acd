import Foundation

/// An entity: a kind of object with attributes and relationships, stored in one table.
///
/// ## Topics
/// - ``attributes``
/// - ``relationships``
/// - ``indexes``
/// - ``objectClass``
/// - ``validator``
/// - ``ownership``
public struct EntityDescription: Sendable {
    /// Checks an object before it is saved; throw ``ValidationError`` (or any error) to refuse.
    public typealias Validator = @Sendable (ManagedObject) throws -> Void

    public var name: String
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    public var indexes: [IndexDescription]
    /// The Swift class objects of this entity are made of; ``ManagedObject`` when nil.
    public var objectClass: ManagedObject.Type?
    /// Extra validation run for every inserted or updated object of this entity at save.
    public var validator: Validator?
    /// Who may see this entity's objects on a shared server, or nil: every role that may
    /// read its table.
    public var ownership: Ownership?

    public init(
        name: String,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        indexes: [IndexDescription] = [],
        objectClass: ManagedObject.Type? = nil,
        validator: Validator? = nil,
        ownership: Ownership? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
        self.objectClass = objectClass
        self.validator = validator
        self.ownership = ownership
    }

    /// The attribute with this name, if any.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship with this name, if any.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// The names of all attributes and relationships.
    public var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}
