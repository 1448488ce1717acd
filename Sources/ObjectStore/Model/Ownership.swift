/// Who may see an entity's objects when its store is shared through a server: the rule that
/// sharing turns into PostgreSQL row-level security.
///
/// An entity without one is seen by every role that may read its table. With one, a role
/// sees (and writes) only the objects it owns or that are shared, and the change log shows
/// it nothing of the others:
///
/// - ``owner(attribute:sharedAttribute:)``: each object names its owner, the database role
///   that inserted it (the server sets it; a desktop cannot choose another). The object is
///   seen by its owner, and by every role when its Boolean shared attribute is true. Only
///   the owner may change either attribute. An object whose owner is nil (one inserted
///   before the entity had an owner) is seen by every role.
/// - ``inherited(through:)``: each object is seen by whoever sees the object its to-one
///   relationship names (a to-do item by whoever sees its list). One that names none is seen
///   by every role.
///
/// In a JSON model file: `"ownership": { "owner": "owner", "shared": "shared" }` or
/// `"ownership": { "through": "list" }` on the entity.
///
/// ## Topics
/// - ``owner(attribute:sharedAttribute:)``
/// - ``inherited(through:)``
public enum Ownership: Sendable, Hashable {
    /// Objects owned by the role named in the optional string attribute `attribute`, and
    /// seen by every role when the Boolean attribute `sharedAttribute` is true (never, when
    /// nil).
    case owner(attribute: String, sharedAttribute: String?)
    /// Objects seen by whoever sees the object that the to-one relationship `relationship`
    /// names, which must be of an entity with ``owner(attribute:sharedAttribute:)``.
    case inherited(through: String)
}

extension Model {
    /// Checks that an entity's ``EntityDescription/ownership`` names what it must.
    func validateOwnership(of entity: EntityDescription) throws {
        let place = "\(entity.name) ownership"
        switch entity.ownership {
        case nil:
            return
        case .owner(let name, let sharedName)?:
            guard let owner = entity.attribute(named: name), owner.type == .string, owner.isOptional else {
                throw ModelError(place, "the owner attribute '\(name)' must be an optional string attribute of \(entity.name) (the server fills it in with the role that inserts the object)")
            }
            if let sharedName, entity.attribute(named: sharedName)?.type != .bool {
                throw ModelError(place, "the shared attribute '\(sharedName)' must be a bool attribute of \(entity.name)")
            }
        case .inherited(let name)?:
            guard let relationship = entity.relationship(named: name), storesForeignKey(relationship, of: entity) else {
                throw ModelError(place, "'\(name)' must be a to-one relationship of \(entity.name) whose inverse is to-many")
            }
            guard case .owner? = self.entity(named: relationship.destinationEntity)?.ownership else {
                throw ModelError(place, "\(relationship.destinationEntity), which '\(name)' names, must have an owner attribute of its own (ownership: owner), not inherit one")
            }
        }
    }
}
