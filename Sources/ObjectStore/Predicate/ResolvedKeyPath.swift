/// A key path resolved against a model: the relationships it goes through, and what it
/// ends on. Predicates and sort descriptors resolve their key paths with it to validate
/// them and to compile them to SQL.
struct ResolvedKeyPath {
    /// One step through a relationship.
    struct Hop {
        let relationship: RelationshipDescription
        let source: EntityDescription
        let destination: EntityDescription
        let inverse: RelationshipDescription
        /// Whether the source table holds the destination's key in a column named after
        /// the relationship; otherwise the destination table holds the source's key in the
        /// inverse's column.
        let sourceStoresKey: Bool
    }

    enum Terminal {
        case attribute(AttributeDescription)
        /// `toMany.@count`.
        case count(Hop)
        /// A to-one relationship itself, which can only be compared with nil.
        case relationship(Hop)
    }

    let components: [String]
    let hops: [Hop]
    let terminal: Terminal

    /// The type of the value the path gives; nil when it ends on a relationship.
    var valueType: AttributeType? {
        switch terminal {
        case .attribute(let attribute): return attribute.type
        case .count: return .integer
        case .relationship: return nil
        }
    }

    var text: String { PredicateFormatter.format(keyPath: components) }

    /// Resolves `components` from `entity`; throws when a key does not exist or a path
    /// goes on after an attribute.
    static func resolve(_ components: [String], from root: EntityDescription, in model: Model) throws -> ResolvedKeyPath {
        let path = PredicateFormatter.format(keyPath: components)
        let place = components.count > 1 ? "in key path '\(path)': " : ""
        var entity = root
        var hops: [Hop] = []
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if component == countComponent {
                throw FetchPredicateError(.keyPath, "\(place)@count must come last, right after a to-many relationship, as in items.@count")
            }
            if let attribute = entity.attribute(named: component) {
                guard isLast else {
                    throw FetchPredicateError(.keyPath, "\(place)'\(component)' is an attribute of \(entity.name), not a relationship, so it cannot be followed by '.\(components[index + 1])'")
                }
                return ResolvedKeyPath(components: components, hops: hops, terminal: .attribute(attribute))
            }
            guard let relationship = entity.relationship(named: component) else {
                throw FetchPredicateError(.keyPath, "\(place)\(entity.name) has no attribute or relationship named '\(component)'; its keys are \(entity.propertyNames.joined(separator: ", "))")
            }
            let destination = model.entity(named: relationship.destinationEntity)!  // the model is validated
            let hop = Hop(
                relationship: relationship, source: entity, destination: destination,
                inverse: model.inverse(of: relationship),
                sourceStoresKey: model.storesForeignKey(relationship, of: entity))
            if isLast {
                return ResolvedKeyPath(components: components, hops: hops, terminal: .relationship(hop))
            }
            if components[index + 1] == countComponent && index + 1 == components.count - 1 {
                guard relationship.isToMany else {
                    throw FetchPredicateError(.keyPath, "\(place)@count counts a to-many relationship, and '\(component)' of \(entity.name) is to-one; compare it with nil instead")
                }
                return ResolvedKeyPath(components: components, hops: hops, terminal: .count(hop))
            }
            hops.append(hop)
            entity = destination
        }
        preconditionFailure("a key path has at least one component")
    }

    /// Checks that the path reads one value per object: only to-one relationships, and a
    /// to-many one only before @count.
    func checkScalar() throws {
        var steps = hops
        if case .relationship(let hop) = terminal { steps.append(hop) }
        // Each step consumes one component, so a step's index is its component's index.
        guard let index = steps.firstIndex(where: { $0.relationship.isToMany }) else { return }
        let prefix = PredicateFormatter.format(keyPath: Array(components[...index]))
        throw FetchPredicateError(.keyPath, "'\(prefix)' is a to-many relationship of \(steps[index].source.name); compare its objects with ANY, ALL or NONE (as in ANY \(prefix).name == …) or count them with \(prefix).@count")
    }

    /// Checks that the path suits ANY, ALL or NONE: through a to-many relationship, to an
    /// attribute of the related objects.
    func checkAggregate(_ modifier: FetchPredicate.Modifier) throws {
        guard case .attribute = terminal else {
            throw FetchPredicateError(.keyPath, "\(modifier.rawValue) \(text): compare an attribute of the related objects, as in \(modifier.rawValue) \(text).name == 'x' (@count and relationships cannot end such a key path)")
        }
        guard hops.contains(where: { $0.relationship.isToMany }) else {
            throw FetchPredicateError(.keyPath, "\(modifier.rawValue) needs a key path through a to-many relationship, and '\(text)' has none; remove \(modifier.rawValue)")
        }
    }
}
