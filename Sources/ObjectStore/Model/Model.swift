import Foundation

/// A validated set of entities: the schema of an object graph.
///
/// Derive one from your ``ManagedObject`` subclasses with ``init(classes:)``, build it in
/// Swift from ``EntityDescription`` values with ``init(entities:)``, or load it from a JSON
/// model file with ``init(contentsOf:)`` (format in `Docs/ModelFormat.md`). The initializers
/// validate the whole model and throw a ``ModelError`` naming the entity (or class) and
/// property at fault.
///
/// ## Topics
/// - ``init(classes:)``
/// - ``init(entities:)``
/// - ``init(contentsOf:)``
/// - ``entity(named:)``
/// - ``inverse(of:)``
/// - ``fingerprint``
public struct Model: Sendable {
    /// The entities, in the order they were given.
    public let entities: [EntityDescription]
    private let indexByName: [String: Int]

    /// Validates and builds a model.
    public init(entities: [EntityDescription]) throws {
        var indexByName: [String: Int] = [:]
        var lowercasedNames: Set<String> = []
        for (index, entity) in entities.enumerated() {
            try Self.checkName(entity.name, at: entity.name, what: "entity name")
            guard lowercasedNames.insert(entity.name.lowercased()).inserted else {
                throw ModelError(entity.name, "duplicate entity name (names are compared ignoring case); rename one of them")
            }
            indexByName[entity.name] = index
        }
        self.entities = entities
        self.indexByName = indexByName
        for entity in entities { try validate(entity) }
    }

    /// The entity with this name, if the model has one.
    public func entity(named name: String) -> EntityDescription? {
        indexByName[name].map { entities[$0] }
    }

    /// The entity with this name, or a ``ModelError`` listing the entities there are.
    public func existingEntity(named name: String) throws -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw ModelError(name, "no such entity; the model has \(entities.map(\.name).joined(separator: ", "))")
        }
        return entity
    }

    /// The relationship on the destination entity that points back along `relationship`.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription {
        // Validation guarantees both exist.
        entity(named: relationship.destinationEntity)!.relationship(named: relationship.inverseName)!
    }

    /// Whether `relationship` of `entity` is stored as a key column in `entity`'s table.
    ///
    /// To-one relationships with a to-many inverse own the column; of a one-to-one pair, the
    /// side whose `Entity.relationship` name sorts first does. To-many relationships never do:
    /// they are answered by querying the destination's column.
    public func storesForeignKey(_ relationship: RelationshipDescription, of entity: EntityDescription) -> Bool {
        if relationship.isToMany { return false }
        let inverse = self.inverse(of: relationship)
        if inverse.isToMany { return true }
        // `<=`: a one-to-one relationship that is its own inverse (spouse) stores the key.
        return "\(entity.name).\(relationship.name)" <= "\(relationship.destinationEntity).\(inverse.name)"
    }

    private func validate(_ entity: EntityDescription) throws {
        var seen: Set<String> = []
        for name in entity.propertyNames {
            try Self.checkName(name, at: "\(entity.name).\(name)", what: "property name")
            guard seen.insert(name.lowercased()).inserted else {
                throw ModelError("\(entity.name).\(name)", "duplicate property name (names are compared ignoring case); rename one of them")
            }
        }
        for attribute in entity.attributes { try validate(attribute, of: entity) }
        for relationship in entity.relationships { try validate(relationship, of: entity) }
        try validateOwnership(of: entity)
        for index in entity.indexes {
            let place = "\(entity.name) index \(index.name ?? index.elements.map(\.property).joined(separator: ","))"
            if index.elements.isEmpty { throw ModelError(place, "an index needs at least one property") }
            for element in index.elements {
                if entity.attribute(named: element.property) != nil { continue }
                if let relationship = entity.relationship(named: element.property),
                   storesForeignKey(relationship, of: entity) { continue }
                throw ModelError(place, "unknown property '\(element.property)'; index attributes or to-one relationships of \(entity.name) (\(entity.attributes.map(\.name).joined(separator: ", ")))")
            }
        }
    }

    private func validate(_ attribute: AttributeDescription, of entity: EntityDescription) throws {
        let place = "\(entity.name).\(attribute.name)"
        if !attribute.defaultValue.isNull && attribute.defaultValue.converted(to: attribute.type) == nil {
            throw ModelError(place, "default value \(attribute.defaultValue) is not a \(attribute.type); give a \(attribute.type) or no default")
        }
        for (label, bound) in [("minValue", attribute.minValue), ("maxValue", attribute.maxValue)] {
            guard let bound else { continue }
            guard [.integer, .double, .date].contains(attribute.type), bound.converted(to: attribute.type) != nil else {
                throw ModelError(place, "\(label) \(bound) does not fit a \(attribute.type) attribute; only integer, double and date attributes take a \(label) of their own type")
            }
        }
        if attribute.minLength != nil || attribute.maxLength != nil, ![.string, .binary].contains(attribute.type) {
            throw ModelError(place, "minLength/maxLength apply to string and binary attributes only")
        }
        if attribute.isCounter, ![.integer, .double].contains(attribute.type) {
            throw ModelError(place, "merge \"add\" makes a counter, which is a number: only integer and double attributes take it, not \(attribute.type)")
        }
    }

    private func validate(_ relationship: RelationshipDescription, of entity: EntityDescription) throws {
        let place = "\(entity.name).\(relationship.name)"
        guard let destination = self.entity(named: relationship.destinationEntity) else {
            throw ModelError(place, "destination entity '\(relationship.destinationEntity)' does not exist; the model has \(entities.map(\.name).joined(separator: ", "))")
        }
        guard let inverse = destination.relationship(named: relationship.inverseName) else {
            throw ModelError(place, "missing inverse: \(destination.name) has no relationship '\(relationship.inverseName)'; add it, pointing back to \(entity.name)")
        }
        guard inverse.destinationEntity == entity.name, inverse.inverseName == relationship.name else {
            throw ModelError(place, "inverse \(destination.name).\(inverse.name) points to \(inverse.destinationEntity).\(inverse.inverseName), not back to \(entity.name).\(relationship.name); make the two relationships name each other")
        }
        if relationship.isToMany && inverse.isToMany {
            throw ModelError(place, "many-to-many relationships are not supported; model the link as an entity of its own with two to-one relationships")
        }
    }

    private static func checkName(_ name: String, at place: String, what: String) throws {
        let valid = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        guard valid else {
            throw ModelError(place, "invalid \(what) '\(name)'; use ASCII letters, digits and '_', not starting with a digit")
        }
        let lower = name.lowercased()
        if lower.hasPrefix("z_") || lower.hasPrefix("sqlite_") || lower.hasPrefix("grdb_") {
            throw ModelError(place, "\(what) '\(name)' is reserved (Z_, sqlite_ and grdb_ prefixes are used by the store); rename it")
        }
    }
}
