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
        /// `toMany.@sum.attribute` (or `@avg`, `@min`, `@max`).
        case aggregate(CollectionOperator, Hop, AttributeDescription)
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
        case .aggregate(.sum, _, let attribute): return attribute.type == .double ? .double : .integer
        case .aggregate(.average, _, _): return .double
        case .aggregate(_, _, let attribute): return attribute.type
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
            if CollectionOperator(rawValue: component) != nil {
                throw FetchPredicateError(.keyPath, "\(place)\(component) must come right after a to-many relationship and before one of its attributes, as in items.\(component).price")
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
            if let op = CollectionOperator(rawValue: components[index + 1]) {
                return try aggregate(op, hop, after: index, hops: hops, in: components, place: place)
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

    /// `relationship.@sum.attribute` (`relationship` at `index`): the end of a key path.
    private static func aggregate(_ op: CollectionOperator, _ hop: Hop, after index: Int, hops: [Hop], in components: [String], place: String) throws -> ResolvedKeyPath {
        let relationship = hop.relationship.name
        guard hop.relationship.isToMany else {
            throw FetchPredicateError(.keyPath, "\(place)\(op.rawValue) computes over a to-many relationship, and '\(relationship)' of \(hop.source.name) is to-one")
        }
        guard index + 3 == components.count, let attribute = hop.destination.attribute(named: components[index + 2]) else {
            throw FetchPredicateError(.keyPath, "\(place)\(op.rawValue) must be followed by one attribute of \(hop.destination.name), as in \(relationship).\(op.rawValue).\(hop.destination.attributes.first?.name ?? "name") (its attributes are \(hop.destination.attributes.map(\.name).joined(separator: ", ")))")
        }
        let numeric = [.integer, .double, .bool].contains(attribute.type)
        guard numeric || ([.minimum, .maximum].contains(op) && [.string, .date].contains(attribute.type)) else {
            throw FetchPredicateError(.typeMismatch, "\(place)\(op.rawValue) needs \([.sum, .average].contains(op) ? "a number" : "a number, a date or a string"), and '\(attribute.name)' is \(attribute.type == .integer ? "an" : "a") \(attribute.type) attribute")
        }
        return ResolvedKeyPath(components: components, hops: hops, terminal: .aggregate(op, hop, attribute))
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
